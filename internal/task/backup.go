package task

import (
	"errors"
	"fmt"

	"github.com/weir-stream/weir/internal/exchange"
)

// This file is the sender's store of upstream backup: the output its
// writers retain per channel, trimmed when a checkpoint completes and
// replayed from a record to a restarted receiver. The subtask's side
// (what to trim when, replay requests, duplicates) is in replay.go.

// ErrBackupLost is the cause of a failure that upstream backup cannot
// recover: a sender no longer holds the output a restarted receiver
// needs (its retained output outgrew Options.RetainLimit). The engine
// falls back to a global rollback.
var ErrBackupLost = errors.New("upstream backup lost")

// backup is the output a subtask's writers retain for replay to a
// restarted receiver (upstream backup, Hwang et al.): every data batch
// and every watermark, idleness and end element sent on each channel
// since the receiver's latest completed checkpoint. Barriers and latency
// markers are not kept; a replay starts after the restored checkpoint,
// so the old barriers are of no use.
//
// A backup belongs to its subtask's goroutine. Entries are trimmed when
// a checkpoint completes, up to where the subtask stood on each channel
// when it sent that checkpoint's barrier. Retained bytes are bounded by
// limit; past it the backup is dropped and is valid again only from the
// next barrier on.
type backup struct {
	limit int64
	bytes int64
	lost  bool // dropped for the limit and not yet valid again
	logs  map[chanKey]*chanLog
}

type chanKey struct{ writer, ch int }

// chanLog is one channel's retained output: entries in order, complete
// from record base on (base < 0: not complete from anywhere).
type chanLog struct {
	base    int64
	entries []exchange.Element // Seq of a control element: records sent before it
}

func newBackup(limit int64) *backup {
	return &backup{limit: limit, logs: map[chanKey]*chanLog{}}
}

// start makes writer w's channel ch retain from record sent on.
func (b *backup) start(w, ch int, sent int64) {
	if b.logs[chanKey{w, ch}] == nil {
		b.logs[chanKey{w, ch}] = &chanLog{base: sent}
	}
}

// keep retains e, sent on writer w's channel ch. A data buffer gains the
// backup as a holder before it is sent (exchange.Buffer.Retain), so that
// it goes back to the pool only when both the receiver and the backup
// are done with it.
func (b *backup) keep(w, ch int, e exchange.Element) {
	l := b.logs[chanKey{w, ch}]
	if l == nil || l.base < 0 {
		return
	}
	switch e.Kind {
	case exchange.Data:
		e.Buf.Retain()
		b.bytes += int64(cap(e.Buf.B))
	case exchange.Watermark, exchange.Idle, exchange.End:
		b.bytes += 64
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
func (b *backup) drop() {
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

// resume makes dropped logs valid again from the records sent so far on
// each channel; sent(w, ch) returns them. It is called at a barrier.
func (b *backup) resume(sent func(w, ch int) int64) {
	if !b.lost {
		return
	}
	for k, l := range b.logs {
		l.base = sent(k.writer, k.ch)
	}
	b.lost = false
}

// trim drops the entries of writer w's channel ch before record upTo
// (and the control elements that preceded it).
func (b *backup) trim(w, ch int, upTo int64) {
	l := b.logs[chanKey{w, ch}]
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
			freed += int64(cap(e.Buf.B))
			e.Buf.Release()
		} else {
			freed += 64
		}
	}
	return freed
}

// since returns the entries of writer w's channel ch a receiver that
// holds the records before from needs: data batches that end after from
// (the first may start before it) and the control elements sent at or
// after it. It fails with ErrBackupLost when the log does not reach back
// to from.
func (b *backup) since(w, ch int, from int64) ([]exchange.Element, error) {
	l := b.logs[chanKey{w, ch}]
	if l == nil || l.base < 0 || from < l.base {
		base := int64(-1)
		if l != nil {
			base = l.base
		}
		return nil, fmt.Errorf("replay from record %d requested, output retained from %d: %w", from, base, ErrBackupLost)
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
func (b *backup) Retained() int64 { return b.bytes }
