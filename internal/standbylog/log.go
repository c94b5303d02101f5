// Package standbylog is the input log of a subtask with an active
// standby: every element its primary consumes, in order, with the
// decisions that are not in the input (an aborted alignment, the start of
// a replay), marked where the primary took each checkpoint's snapshot,
// trimmed when a checkpoint completes, and bounded in bytes. The standby
// reads it and applies it through its own input protocol, so that its
// state follows the primary's exactly.
//
// In one process the primary appends and its standby reads the same Log.
// Across processes the primary's Log is shipped as a stream of elements
// (Ship) to a Log of the standby's own (Receive), marks included, so that
// a completed checkpoint trims it there too.
package standbylog

import (
	"sync"

	"github.com/weir-stream/weir/internal/exchange"
)

// Kind is the kind of an Entry.
type Kind uint8

const (
	Element     Kind = iota // an element consumed from channel Ch
	Abort                   // the alignment of Checkpoint was given up
	ReplayStart             // channel Ch's replay began at record E.Seq
)

// An Entry is one step of a primary's input.
type Entry struct {
	Kind Kind
	Ch   int
	// E is the element consumed (Element), or carries the record a replay
	// began at in Seq (ReplayStart). A data batch's buffer is the log's
	// copy: never pooled, never written.
	E exchange.Element
	// Skip and Limit are the records of E the primary consumed: a batch
	// split where a logged consumption order turned, or where duplicates
	// were dropped.
	Skip, Limit int
	Checkpoint  int64 // Abort's checkpoint
}

// mark is where the primary took checkpoint id's snapshot.
type mark struct {
	id int64
	at int64 // absolute entry index
}

// A Log is the input a subtask with an active standby consumed, shared by
// the incarnation that is primary (appending) and its standby (reading).
// It is safe for concurrent use. Entries are addressed by their absolute
// index since the log began; trimming does not renumber them.
type Log struct {
	mu      sync.Mutex
	base    int64 // absolute index of entries[0]
	entries []Entry
	marks   []mark
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
	// own: a promoted standby logs its own input here now; what its lost
	// primary shipped is no longer added.
	own bool
}

// New returns an empty log bounded to limit bytes of data (0: no bound).
func New(limit int64) *Log {
	return &Log{limit: limit, ready: make(chan struct{}, 1), read: -1}
}

// Ready returns a channel that receives when an entry was added, the log
// was lost, or the primary stopped: a reader that found no next entry
// waits on it and looks again.
func (l *Log) Ready() <-chan struct{} { return l.ready }

// Signal wakes a reader waiting on Ready.
func (l *Log) Signal() {
	select {
	case l.ready <- struct{}{}:
	default:
	}
}

// Append adds an entry. A data buffer is copied into a buffer of the
// log's own, which is not pooled, so that no reader recycles it; trimmed,
// it goes to the garbage collector, so a standby may still read one it
// took. A lost log adds nothing until its next mark.
func (l *Log) Append(en Entry) { l.add(en, true) }

// add adds an entry, copying its data buffer first with copyBuf (else
// the buffer is the log's own already).
func (l *Log) add(en Entry, copyBuf bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addLocked(en, copyBuf)
}

func (l *Log) addLocked(en Entry, copyBuf bool) {
	if l.lost {
		return
	}
	if en.Kind == Element && en.E.Kind == exchange.Data {
		b := en.E.Buf
		if copyBuf {
			b = b.Copy()
		}
		en.E.Buf = b
		l.bytes += int64(len(b.B))
	}
	l.entries = append(l.entries, en)
	if l.limit > 0 && l.bytes > l.limit {
		l.dropLocked()
	}
	l.Signal()
}

// dropLocked drops every entry: the log is lost until the next mark.
func (l *Log) dropLocked() {
	l.releaseLocked(len(l.entries))
	l.marks = l.marks[:0]
	l.lost = true
}

// releaseLocked drops the first n entries.
func (l *Log) releaseLocked(n int) {
	for i := range n {
		if b := l.entries[i].E.Buf; b != nil {
			l.bytes -= int64(len(b.B))
		}
	}
	clear(l.entries[:n])
	l.entries = append(l.entries[:0], l.entries[n:]...)
	l.base += int64(n)
}

// Mark notes that the primary took checkpoint id's snapshot here. A lost
// log starts again from it.
func (l *Log) Mark(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.markLocked(id)
}

func (l *Log) markLocked(id int64) {
	l.lost = false
	l.marks = append(l.marks, mark{id, l.base + int64(len(l.entries))})
}

// Trim drops what came before checkpoint id's mark, now that id
// completed, except what the standby has not finished with. An id never
// marked trims nothing.
func (l *Log) Trim(id int64) {
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

// Restart makes the log start again at checkpoint id's mark: a primary
// restarted from it consumes anew from there. No standby reads it then:
// one that read the failed incarnation's entries (a shipper to a standby
// in another process) finds the log lost at its next read, even when it
// had read them all. The indexes go on past a gap of one for that: the
// entry such a reader asks for next is released, not the new
// incarnation's first, which it would have shipped as if it followed the
// failed one's input, and a standby in another process would have
// applied the input since the checkpoint twice.
func (l *Log) Restart(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.releaseLocked(len(l.entries))
	l.base++
	l.marks = append(l.marks[:0], mark{id, l.base})
	l.lost, l.gone, l.read = false, false, -1
}

// StartReading makes a new standby read from checkpoint id's mark and
// returns the index of its first entry; ok is false when the log does not
// hold that mark (trimmed, lost, or its primary stopped).
func (l *Log) StartReading(id int64) (at int64, ok bool) {
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

// Lag returns how many entries the standby has yet to apply (0 when no
// standby reads).
func (l *Log) Lag() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.read < 0 {
		return 0
	}
	return l.base + int64(len(l.entries)) - l.read
}

// StopReading says no standby reads any more.
func (l *Log) StopReading() {
	l.mu.Lock()
	l.read = -1
	l.mu.Unlock()
}

// Next returns entry at (the reader is done with the ones before), or ok
// false when there is none yet; gone says the primary stopped, so none
// will come. lost says the entry was dropped: the standby must stop.
func (l *Log) Next(at int64) (en Entry, ok, gone, lost bool) {
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

// SetUnsafe tells the log whether a standby could take the primary's
// place now: not while the primary holds input outside its gate (a
// logged order it follows, split batches) or awaits replays.
func (l *Log) SetUnsafe(unsafe bool) {
	l.mu.Lock()
	l.unsafe = unsafe
	l.mu.Unlock()
}

// HandOver notes that the primary, in this process, stopped: it reports
// whether its standby can take its place (the log is intact and the
// primary was not unsafe); if so the standby's Next reports gone once it
// applied the rest. The caller signals the reader (Signal) once it set
// up what the standby takes over.
func (l *Log) HandOver() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gone = !l.lost && !l.unsafe
	return l.gone
}

// PrimaryLost notes that the primary, in a lost process, is gone: the
// standby takes over once it applied what reached it.
func (l *Log) PrimaryLost() {
	l.mu.Lock()
	l.gone = true
	l.Signal()
	l.mu.Unlock()
}

// TakenOver notes that the standby took its primary's place in this
// process: it is the primary now and appends again, for a new standby.
func (l *Log) TakenOver() {
	l.mu.Lock()
	l.gone = false
	l.mu.Unlock()
}

// LogOwnInput makes the log of a promoted remote standby its own: it
// drops what the lost primary shipped, takes no more of it (Receive), and
// logs the subtask's input from its next snapshot's mark on, for a new
// standby to follow (Ship).
func (l *Log) LogOwnInput() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.own = true
	l.releaseLocked(len(l.entries))
	l.marks = l.marks[:0]
	l.lost, l.gone, l.read = true, false, -1
}

// Len returns the number of entries the log holds.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// Entries returns a copy of the entries the log holds, oldest first.
func (l *Log) Entries() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Entry(nil), l.entries...)
}
