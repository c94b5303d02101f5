package task

import (
	"fmt"

	"github.com/weir-stream/weir/internal/input"
)

// A task that merges several input channels consumes them in the order
// their records happen to arrive. To regenerate its output record for
// record after a restart, it must consume them in the same order again.
// Under fine-grained failover every such subtask whose chain is
// Deterministic logs that order (its determinants, as Clonos calls them):
// per channel, how far it had consumed when it turned to another. The log
// lives in the runtime, so it outlives a failed incarnation; it is
// trimmed when a checkpoint completes. A restarted incarnation follows
// the log from its restored checkpoint on, splitting batches where the
// order switched channels mid-batch, before it polls its gate freely.

// detEntry says: consume channel ch until upTo records were received on
// it.
type detEntry struct {
	ch   int
	upTo int64
}

// detMark is where the snapshot of checkpoint id was taken in the log.
type detMark struct {
	id int64
	at int
}

// determinants is one subtask's consumption order since its latest
// completed checkpoint. Only the subtask's running incarnation touches
// it; the next one takes it over after the previous stopped.
type determinants struct {
	base    int64 // the checkpoint whose snapshot entries[0] follows (0: the start)
	entries []detEntry
	marks   []detMark
}

// record notes that channel ch has been consumed up to upTo records. It
// extends the last entry only when no snapshot was marked after it: a
// restart from that snapshot must find the turn that follows it.
func (d *determinants) record(ch int, upTo int64) {
	n := len(d.entries)
	marked := len(d.marks) > 0 && d.marks[len(d.marks)-1].at == n
	if n > 0 && d.entries[n-1].ch == ch && !marked {
		d.entries[n-1].upTo = upTo
		return
	}
	d.entries = append(d.entries, detEntry{ch, upTo})
}

// mark notes where checkpoint id's snapshot was taken.
func (d *determinants) mark(id int64) {
	d.marks = append(d.marks, detMark{id, len(d.entries)})
}

// trim drops what came before checkpoint id's snapshot, now that id
// completed.
func (d *determinants) trim(id int64) {
	for i, m := range d.marks {
		if m.id != id {
			continue
		}
		d.entries = append(d.entries[:0], d.entries[m.at:]...)
		rest := d.marks[i+1:]
		for j := range rest {
			rest[j].at -= m.at
		}
		d.marks = append(d.marks[:0], rest...)
		d.base = id
		return
	}
}

// since returns the order logged after checkpoint id's snapshot (0: from
// the start) and resets the log to start there. ok is false when the log
// does not reach back to it.
func (d *determinants) since(id int64) (order []detEntry, ok bool) {
	at := -1
	if id == d.base {
		at = 0
	}
	for _, m := range d.marks {
		if m.id == id {
			at = m.at
		}
	}
	if at < 0 {
		return nil, false
	}
	order = append([]detEntry(nil), d.entries[at:]...)
	d.entries, d.marks, d.base = d.entries[:0], d.marks[:0], id
	return order, true
}

// startFollowing takes the consumption order this restarted subtask must
// repeat, from the runtime's log of its subtask.
func (s *subtask) startFollowing(restored int64) error {
	if s.det == nil || !s.fresh {
		return nil
	}
	order, ok := s.det.since(restored)
	if !ok {
		return fmt.Errorf("the order in which it consumed its inputs since checkpoint %d was not kept: %w", restored, ErrBackupLost)
	}
	turns := make([]input.Turn, len(order))
	for i, d := range order {
		turns[i] = input.Turn{Ch: d.ch, UpTo: d.upTo}
	}
	s.in.Follow(turns)
	return nil
}
