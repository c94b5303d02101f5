package task

import (
	"sync"

	"github.com/weir-stream/weir/internal/exchange"
)

// This file is the input log of a subtask that has an active standby
// (standby.go): every element its primary consumes, in order, with the
// decisions that are not in the input, marked where the primary took
// each checkpoint's snapshot, trimmed when a checkpoint completes, and
// bounded by Options.RetainLimit. The standby reads it; across
// processes it is shipped (standby_remote.go).

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

// inputLog is the input a subtask with an active standby consumed, shared by the
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
	// own: a promoted standby (Options.PrimaryElsewhere) logs its own input here
	// now; what its lost primary shipped is no longer added (standby_remote.go).
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

// logInput logs element e of channel ch, of which the primary consumes
// records skip to limit, for its standby.
func (s *subtask) logInput(ch int, e exchange.Element, skip, limit int) {
	s.log.append(logEntry{kind: logElement, ch: ch, e: e, skip: skip, limit: limit})
}

// noteUnsafe tells the log whether a standby could take this primary's
// place now: not while it follows a logged order, holds split batches or
// awaits replays, input a standby would not find in the gate.
func (s *subtask) noteUnsafe() {
	if unsafe := !s.in.Settled(); unsafe != s.unsafe {
		s.unsafe = unsafe
		s.log.mu.Lock()
		s.log.unsafe = unsafe
		s.log.mu.Unlock()
	}
}
