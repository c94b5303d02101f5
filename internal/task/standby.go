package task

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/plan"
)

// This file is active standby (Hwang et al.'s process pairs) inside one
// runtime, under Options.ActiveStandby. Every subtask that can regenerate
// its output record for record (Replicated) has a standby: a second
// instance of its chain that processes the same input in the same order
// and sends the same output, while the receivers keep only the first copy
// of each position. When the primary fails, the standby takes its place;
// nothing restarts and no source rewinds.
//
// The primary logs every element it consumes (inputLog), in its order,
// with its decisions that are not in the input (an aborted alignment, the
// start of a replay). The standby applies that log instead of reading a
// gate, so its state follows the primary's exactly. Both write through
// per-channel cursors (cursor): an element goes to the receiver only if
// it extends what either instance delivered, so receivers see one stream
// that whichever instance is ahead extends. When the primary stops, the
// standby applies the rest of the log, then reads the primary's gate and
// control inbox: the switch.
//
// The log is trimmed when a checkpoint completes, to that checkpoint's
// mark (where the primary took its snapshot), so a new standby can start
// from the latest completed checkpoint's state and the log from its mark.
// It is bounded by Options.RetainLimit: past it the log is dropped, the
// standby stops, and a new one can start once a later checkpoint, whose
// mark the log holds again, completes.

// cursor is the position in a channel's stream (records and control
// elements counted together) up to which a primary or its standby
// delivered, with the latest control elements delivered, against which
// the instance behind checks the ones it does not deliver.
type cursor struct {
	mu    sync.Mutex
	pos   int64
	marks [64]ctlMark // ring of the latest control elements delivered
	n     int         // control elements recorded
}

// ctlMark is a control element delivered at pos.
type ctlMark struct {
	pos  int64
	kind exchange.Kind
	v    int64 // a barrier's checkpoint, a watermark's time
}

func markOf(pos int64, e exchange.Element) ctlMark {
	m := ctlMark{pos: pos, kind: e.Kind}
	switch e.Kind {
	case exchange.Barrier:
		m.v = e.Checkpoint
	case exchange.Watermark:
		m.v = e.Time
	}
	return m
}

// record notes control element e, delivered at pos.
func (c *cursor) record(pos int64, e exchange.Element) {
	c.marks[c.n%len(c.marks)] = markOf(pos, e)
	c.n++
}

// check compares element e, which covers [at, at+n) and is not delivered
// because the other instance delivered those positions, with what the
// ring says was delivered there: a control element where the other sent
// records, or records where it sent a control element, or another
// control element, means the two instances diverged. Positions older
// than the ring are not checked.
func (c *cursor) check(at, n int64, e exchange.Element) error {
	k := min(c.n, len(c.marks))
	if k == 0 {
		return nil
	}
	oldest := c.marks[(c.n-k)%len(c.marks)].pos
	if c.n > len(c.marks) && at < oldest {
		return nil
	}
	var found *ctlMark
	for i := range k {
		m := &c.marks[(c.n-1-i)%len(c.marks)]
		if m.pos >= at && m.pos < at+n {
			found = m
			break
		}
	}
	if e.Kind == exchange.Data {
		if found != nil {
			return fmt.Errorf("at position %d: one has records where the other sent a %s", found.pos, found.kind)
		}
		return nil
	}
	if want := markOf(at, e); found == nil {
		return fmt.Errorf("at position %d: one has a %s where the other sent records", at, e.Kind)
	} else if *found != want {
		return fmt.Errorf("at position %d: one has a %s (%d) where the other sent a %s (%d)", at, e.Kind, want.v, found.kind, found.v)
	}
	return nil
}

// logKind is the kind of an inputLog entry.
type logKind uint8

const (
	logElement     logKind = iota // an element consumed from channel ch
	logAbort                      // the alignment of checkpoint was given up
	logReplayStart                // channel ch's replay began at record seq
)

// logEntry is one step of a primary's input.
type logEntry struct {
	kind        logKind
	ch          int
	e           exchange.Element // a data batch's buffer is the log's copy
	skip, limit int
	checkpoint  int64
}

// logMark is where the primary took checkpoint id's snapshot.
type logMark struct {
	id int64
	at int64 // absolute entry index
}

// inputLog is the input a replicated subtask consumed, shared by the
// incarnation that is primary (appending) and its standby (reading).
type inputLog struct {
	mu      sync.Mutex
	base    int64 // absolute index of entries[0]
	entries []logEntry
	marks   []logMark
	bytes   int64
	limit   int64
	lost    bool          // dropped for the limit; valid again from the next mark
	ready   chan struct{} // signalled on append and when the primary stops
	// read is the absolute index of the first entry the standby has not
	// finished with (-1: no standby reads).
	read int64
	// gone: the primary stopped and its standby takes over at the end.
	gone bool
	// unsafe: the primary holds input outside its gate (a logged order
	// it follows, split batches) or awaits replays; a standby cannot
	// take its place then.
	unsafe bool
	// own: a promoted standby (Options.Replica) logs its own input here
	// now; what its lost primary shipped is no longer added (replica.go).
	own bool
}

func newInputLog(limit int64) *inputLog {
	return &inputLog{limit: limit, ready: make(chan struct{}, 1), read: -1}
}

func (l *inputLog) signal() {
	select {
	case l.ready <- struct{}{}:
	default:
	}
}

// append adds an entry. Data buffers are copied into buffers of the log's
// own, which are not pooled, so that no reader recycles them; trimmed,
// they go to the garbage collector, so a standby may still read one it
// took.
func (l *inputLog) append(en logEntry) { l.add(en, true) }

// add adds an entry, copying its data buffer first with copyBuf (else
// the buffer is the log's own already).
func (l *inputLog) add(en logEntry, copyBuf bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addLocked(en, copyBuf)
}

func (l *inputLog) addLocked(en logEntry, copyBuf bool) {
	if l.lost {
		return
	}
	if en.kind == logElement && en.e.Kind == exchange.Data {
		b := en.e.Buf
		if copyBuf {
			b = &exchange.Buffer{B: append([]byte(nil), b.B...), N: b.N}
		}
		en.e.Buf = b
		l.bytes += int64(len(b.B))
	}
	l.entries = append(l.entries, en)
	if l.limit > 0 && l.bytes > l.limit {
		l.dropLocked()
	}
	l.signal()
}

// dropLocked drops every entry: the log is lost until the next mark.
func (l *inputLog) dropLocked() {
	l.releaseLocked(len(l.entries))
	l.marks = l.marks[:0]
	l.lost = true
}

// releaseLocked drops the first n entries.
func (l *inputLog) releaseLocked(n int) {
	for i := range n {
		if b := l.entries[i].e.Buf; b != nil {
			l.bytes -= int64(len(b.B))
		}
	}
	clear(l.entries[:n])
	l.entries = append(l.entries[:0], l.entries[n:]...)
	l.base += int64(n)
}

// mark notes that the primary took checkpoint id's snapshot here. A lost
// log starts again from it.
func (l *inputLog) mark(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.markLocked(id)
}

func (l *inputLog) markLocked(id int64) {
	l.lost = false
	l.marks = append(l.marks, logMark{id, l.base + int64(len(l.entries))})
}

// trim drops what came before checkpoint id's mark, now that id
// completed, except what the standby has not finished with.
func (l *inputLog) trim(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, m := range l.marks {
		if m.id != id {
			continue
		}
		upTo := m.at
		if l.read >= 0 {
			upTo = min(upTo, l.read)
		}
		l.releaseLocked(int(upTo - l.base))
		l.marks = append(l.marks[:0], l.marks[i:]...)
		return
	}
}

// restart makes the log start again at checkpoint id's mark: a primary
// restarted from it consumes anew from there.
func (l *inputLog) restart(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.releaseLocked(len(l.entries))
	l.marks = append(l.marks[:0], logMark{id, l.base})
	l.lost, l.gone, l.read = false, false, -1
}

// startReading makes a new standby read from checkpoint id's mark; ok is
// false when the log does not hold it.
func (l *inputLog) startReading(id int64) (at int64, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost || l.gone {
		return 0, false
	}
	for _, m := range l.marks {
		if m.id == id {
			l.read = m.at
			return m.at, true
		}
	}
	return 0, false
}

// lag returns how many entries the standby has yet to apply (0 when no
// standby reads).
func (l *inputLog) lag() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.read < 0 {
		return 0
	}
	return l.base + int64(len(l.entries)) - l.read
}

// stopReading says no standby reads any more.
func (l *inputLog) stopReading() {
	l.mu.Lock()
	l.read = -1
	l.mu.Unlock()
}

// next returns entry at (done with the ones before), or ok false when
// there is none yet; gone says the primary stopped, so none will come.
// lost says the entry was dropped: the standby must stop.
func (l *inputLog) next(at int64) (en logEntry, ok, gone, lost bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost || at < l.base {
		return en, false, false, true
	}
	l.read = at
	if i := at - l.base; i < int64(len(l.entries)) {
		return l.entries[i], true, false, false
	}
	return en, false, l.gone, false
}

// standby is a running standby of a subtask.
type standby struct {
	s      *subtask
	cancel context.CancelCauseFunc
	exited chan struct{}
	at     int64 // the next log entry to apply
	// inbox is the standby's own control inbox in a runtime that also runs
	// its primary (nil in a replica runtime, where the standby reads the
	// subtask's): completions reach it there, to trim what it retains.
	inbox    chan control
	promoted bool  // its primary stopped; it takes over (under Runtime.mu)
	failure  error // the primary's failure it takes over from
	failedAt int64 // when, in Unix nanoseconds

	// Set by Promote (Options.Replica), under Runtime.mu.
	promotion   *Promotion
	incarnation int64
	ready       func()
}

// Replicated reports whether subtasks of v get an active standby: they
// have outputs, read a gate, and regenerate their output exactly from the
// same input order (ReplayDeterministic). Sources restart alone instead,
// and sinks, whose writes a second instance would repeat, too.
func Replicated(v *plan.Vertex) bool {
	return len(v.Outputs) > 0 && v.Head().Kind != plan.Source && ReplayDeterministic(v, true)
}

// ErrNotDeterministic fails a job whose task's primary and active standby
// sent different output: the task is not deterministic, so neither a
// takeover nor a restart alone can keep the output exact.
var ErrNotDeterministic = errors.New("the task is not deterministic")

// errStandbyLost stops a standby whose primary's log was dropped.
var errStandbyLost = errors.New("the input log it follows was dropped for its size")

// runStandby drives a standby: it applies its primary's logged input
// until the primary stopped and the log ended, then takes its place and
// reads the primary's gate.
func (s *subtask) runStandby() error {
	st, log := s.standby, s.rt.logs[s.v.ID][s.index]
	for {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		en, ok, gone, lost := log.next(st.at)
		if lost {
			return errStandbyLost
		}
		if !ok {
			if gone {
				s.takeOver()
				return s.runInputs()
			}
			s.flushAll()
			select {
			case <-log.ready:
			case c := <-s.inbox:
				s.handleControl(c)
			case <-s.ctx.Done():
				return s.ctx.Err()
			}
			continue
		}
		st.at++
		s.pollControl()
		if done, err := s.applyLogged(en); done || err != nil {
			if err == nil && s.promotedAtEnd() {
				// The subtask waits for its release (subtask.run).
				s.takeOver()
				s.rt.markFinished(s.id())
			}
			return err
		}
	}
}

// promotedAtEnd decides, once a standby applied the end of its primary's
// input, whether it takes the subtask's place: it does when its primary
// failed already (it was promoted, maybe while it applied the end), since
// the subtask must still take the final checkpoint and wait for its
// release. Otherwise it is no standby any more: a later failure of the
// primary is not handed to it, and the subtask restarts instead.
func (s *subtask) promotedAtEnd() bool {
	r, id, st := s.rt, s.id(), s.standby
	r.mu.Lock()
	defer r.mu.Unlock()
	if st.promoted {
		return true
	}
	if r.standbys[id] == st {
		delete(r.standbys, id)
	}
	return false
}

// applyLogged applies one entry of the primary's input log to a standby;
// done is set when the input ended.
func (s *subtask) applyLogged(en logEntry) (done bool, err error) {
	switch en.kind {
	case logAbort:
		s.abortCheckpoint(en.checkpoint)
	case logReplayStart:
		s.recv[en.ch] = en.e.Seq
	case logElement:
		return s.process(en.ch, en.e, en.skip, en.limit)
	}
	return false, nil
}

// takeOver makes a standby the subtask: it reads the primary's gate and
// inbox, logs its input and counts into the subtask's metrics from now on.
func (s *subtask) takeOver() {
	r, id := s.rt, s.id()
	st := s.standby
	s.standby = nil
	s.gate = r.gates[id.Vertex][id.Subtask]
	if r.opts.Replica {
		s.det, s.tctx.Metrics = r.dets[id.Vertex][id.Subtask], r.metrics[id.Vertex][id.Subtask]
		for _, o := range s.outs {
			o.setMetrics(s.tctx.Metrics)
		}
		s.log = r.logs[id.Vertex][id.Subtask]
		s.log.logOwnInput()
		s.takeOverElsewhere(st)
		return
	}
	// The primary may have stopped between its alignment's end and
	// unblocking its channels: the gate's channels are blocked exactly
	// where the standby, which applied all the primary consumed, waits
	// for barriers (aligned checkpoints only block).
	aligned := s.rt.opts.Checkpoint == Aligned
	for c := range s.recv {
		if aligned && s.align != nil && s.align.seen[c] && s.align.frozen == nil {
			s.gate.Block(c)
		} else {
			s.gate.Unblock(c)
		}
	}
	s.inbox = r.inboxes[id.Vertex][id.Subtask]
	s.det = r.dets[id.Vertex][id.Subtask]
	s.log = r.logs[id.Vertex][id.Subtask]
	m := r.metrics[id.Vertex][id.Subtask]
	s.tctx.Metrics = m
	for _, o := range s.outs {
		o.setMetrics(m)
	}
	m.Takeovers.Add(1)
	s.log.mu.Lock()
	s.log.gone = false // it appends again, for a new standby
	s.log.mu.Unlock()
	r.mu.Lock()
	failure, failedAt := st.failure, st.failedAt
	r.mu.Unlock()
	if r.opts.OnFailover != nil {
		r.opts.OnFailover(id, failure, time.Unix(0, failedAt))
	}
}

// standbyBarrier is a standby's side of checkpoint id: it forwards the
// barrier, as its primary does, and notes where its retained output may
// be trimmed, but takes no snapshot; its primary's is the subtask's.
func (s *subtask) standbyBarrier(id int64) {
	s.lastCheckpoint = id
	s.emit(exchange.Element{Kind: exchange.Barrier, Checkpoint: id})
	s.noteTrimPoint(id, s.channelCounts())
}

// logInput logs element e of channel ch, of which the primary consumes
// records skip to limit, for its standby.
func (s *subtask) logInput(ch int, e exchange.Element, skip, limit int) {
	s.log.append(logEntry{kind: logElement, ch: ch, e: e, skip: skip, limit: limit})
}

// noteUnsafe tells the log whether a standby could take this primary's
// place now: not while it follows a logged order, holds split batches or
// awaits replays, input a standby would not find in the gate.
func (s *subtask) noteUnsafe() {
	unsafe := s.awaiting != nil || len(s.follow) > 0
	for _, p := range s.pending {
		unsafe = unsafe || p.Buf != nil
	}
	if unsafe != s.unsafe {
		s.unsafe = unsafe
		s.log.mu.Lock()
		s.log.unsafe = unsafe
		s.log.mu.Unlock()
	}
}
