// Package backup is the sender's store of upstream backup (Hwang et al.):
// the output a subtask's writers retain per channel so that a receiver
// restarted alone can be sent again what its restored state lacks.
//
// A Store keeps every data batch and every watermark, idleness and end
// element sent on each channel since the receivers' latest completed
// checkpoint. Barriers and latency markers are not kept: a replay starts
// after the restored checkpoint, so the old barriers are of no use. The
// store is trimmed when a checkpoint completes, up to where the sender
// stood on each channel when it sent that checkpoint's barrier (Mark,
// Complete), and answers a replay request with the elements a receiver
// needs from a record on (Since). Retained bytes are bounded; past the
// bound the store drops everything and is valid again only from the next
// barrier on.
//
// The subtask's side (when to mark and complete, serving replay requests,
// dropping duplicates at the receiver) lives in internal/task and
// internal/input.
package backup

import (
	"errors"
	"fmt"

	"github.com/weir-stream/weir/internal/exchange"
)

// ErrLost is the cause of a failure that upstream backup cannot recover:
// a sender no longer holds the output a restarted receiver needs (its
// retained output outgrew the bound). The engine falls back to a global
// rollback.
var ErrLost = errors.New("upstream backup lost")

// controlBytes is what a retained control element counts against the
// bound.
const controlBytes = 64

// A Store is one subtask's retained output, per writer and channel. It
// belongs to its subtask's goroutine: it is not safe for concurrent use.
type Store struct {
	limit  int64
	bytes  int64
	lost   bool // dropped for the limit and not yet valid again
	logs   map[key]*chanLog
	points []trimPoint // marked and not yet completed, oldest first
}

type key struct{ writer, ch int }

// chanLog is one channel's retained output: entries in order, complete
// from record base on (base < 0: not complete from anywhere).
type chanLog struct {
	base    int64
	entries []exchange.Element // Seq of a control element: records sent before it
}

// trimPoint is where the subtask stood on each output channel when it
// sent checkpoint id's barrier: once id completes, the receivers' state
// reflects everything before it.
type trimPoint struct {
	id   int64
	sent [][]int64 // per writer, per channel
}

// New returns an empty store bounded to limit retained bytes (0: no
// bound).
func New(limit int64) *Store {
	return &Store{limit: limit, logs: map[key]*chanLog{}}
}

// Start makes writer w's channel ch retain from record sent on. A channel
// not started retains nothing; starting one twice changes nothing.
func (b *Store) Start(w, ch int, sent int64) {
	if b.logs[key{w, ch}] == nil {
		b.logs[key{w, ch}] = &chanLog{base: sent}
	}
}

// Keep retains e, sent on writer w's channel ch. A data buffer gains the
// store as a holder (exchange.Buffer.Retain), so that it goes back to the
// pool only when both the receiver and the store are done with it; Keep
// is called before the buffer is sent. Barriers and latency markers are
// not retained. Past the bound everything is dropped (Lost).
func (b *Store) Keep(w, ch int, e exchange.Element) {
	l := b.logs[key{w, ch}]
	if l == nil || l.base < 0 {
		return
	}
	switch e.Kind {
	case exchange.Data:
		e.Buf.Retain()
		b.bytes += int64(e.Buf.Size())
	case exchange.Watermark, exchange.Idle, exchange.End:
		b.bytes += controlBytes
	default:
		return
	}
	l.entries = append(l.entries, e)
	if b.limit > 0 && b.bytes > b.limit {
		b.drop()
	}
}

// drop lets go of everything retained: the bound was hit. A buffer still
// on its way to a receiver goes back to the pool when the receiver is
// done with it.
func (b *Store) drop() {
	for _, l := range b.logs {
		for _, e := range l.entries {
			if e.Kind == exchange.Data {
				e.Buf.Release()
			}
		}
		l.entries, l.base = nil, -1
	}
	b.bytes = 0
	b.lost = true
}

// Lost reports whether the store dropped its output for the bound and is
// not valid again yet (no Mark since).
func (b *Store) Lost() bool { return b.lost }

// Mark notes that checkpoint id's barrier was sent after sent[w][ch]
// records on writer w's channel ch. A store dropped for the bound is
// valid again from there on.
func (b *Store) Mark(id int64, sent [][]int64) {
	b.resume(func(w, ch int) int64 { return sent[w][ch] })
	b.points = append(b.points, trimPoint{id: id, sent: sent})
}

// resume makes dropped logs valid again from the records sent so far on
// each channel; sent(w, ch) returns them.
func (b *Store) resume(sent func(w, ch int) int64) {
	if !b.lost {
		return
	}
	for k, l := range b.logs {
		l.base = sent(k.writer, k.ch)
	}
	b.lost = false
}

// Complete trims what the receivers' state of checkpoint id reflects,
// now that id completed: everything before the latest barrier marked up
// to id. Marks of later checkpoints stay.
func (b *Store) Complete(id int64) {
	n := 0
	for n < len(b.points) && b.points[n].id <= id {
		n++
	}
	if n == 0 {
		return
	}
	tp := b.points[n-1]
	b.points = append(b.points[:0], b.points[n:]...)
	for w, chans := range tp.sent {
		for j, upTo := range chans {
			b.Trim(w, j, upTo)
		}
	}
}

// Trim drops the entries of writer w's channel ch before record upTo, and
// the control elements that preceded it. A control element sent right
// after record upTo-1 goes; one sent after record upTo stays.
func (b *Store) Trim(w, ch int, upTo int64) {
	l := b.logs[key{w, ch}]
	if l == nil || l.base < 0 || upTo <= l.base {
		return
	}
	n := 0
	for n < len(l.entries) {
		e := l.entries[n]
		end := e.Seq
		if e.Kind == exchange.Data {
			end += int64(e.Buf.N)
		}
		if end > upTo || (e.Kind != exchange.Data && e.Seq == upTo) {
			break
		}
		n++
	}
	b.bytes -= l.release(n)
	l.entries = append(l.entries[:0], l.entries[n:]...)
	l.base = upTo
}

// release returns the first n entries' buffers and the bytes they held.
func (l *chanLog) release(n int) int64 {
	var freed int64
	for _, e := range l.entries[:n] {
		if e.Kind == exchange.Data {
			freed += int64(e.Buf.Size())
			e.Buf.Release()
		} else {
			freed += controlBytes
		}
	}
	return freed
}

// Base returns the record writer w's channel ch is complete from, and
// whether the channel retains at all. A negative base means the channel
// is complete from nowhere (dropped for the bound).
func (b *Store) Base(w, ch int) (base int64, ok bool) {
	l := b.logs[key{w, ch}]
	if l == nil {
		return 0, false
	}
	return l.base, true
}

// Since returns the entries of writer w's channel ch a receiver that
// holds the records before from needs: data batches that end after from
// (the first may start before it) and the control elements sent at or
// after it. The slice is the store's: the caller retains the buffers it
// passes on and does not modify it. Since fails with ErrLost when the
// log does not reach back to from.
func (b *Store) Since(w, ch int, from int64) ([]exchange.Element, error) {
	l := b.logs[key{w, ch}]
	if l == nil || l.base < 0 || from < l.base {
		base := int64(-1)
		if l != nil {
			base = l.base
		}
		return nil, fmt.Errorf("replay from record %d requested, output retained from %d: %w", from, base, ErrLost)
	}
	for i, e := range l.entries {
		end := e.Seq
		if e.Kind == exchange.Data {
			end += int64(e.Buf.N)
			if end > from {
				return l.entries[i:], nil
			}
		} else if e.Seq >= from {
			return l.entries[i:], nil
		}
	}
	return nil, nil
}

// Retained returns the bytes retained for replay.
func (b *Store) Retained() int64 { return b.bytes }
