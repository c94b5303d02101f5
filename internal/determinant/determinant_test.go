package determinant

import (
	"slices"
	"testing"
)

// step is one thing a subtask does to its log: record a turn, mark a
// snapshot, trim at a completed checkpoint, forget the base, or follow
// the log from a checkpoint (Since), expecting order and ok.
type step struct {
	record *Turn
	mark   int64
	trim   int64
	forget bool
	since  *follow
}

type follow struct {
	id    int64
	order []Turn
	ok    bool
}

func rec(ch int, upTo int64) step { return step{record: &Turn{ch, upTo}} }
func mk(id int64) step            { return step{mark: id} }
func trim(id int64) step          { return step{trim: id} }
func since(id int64, ok bool, order ...Turn) step {
	return step{since: &follow{id, order, ok}}
}

func TestTheLogAsASubtaskUsesIt(t *testing.T) {
	for _, c := range []struct {
		name  string
		steps []step
	}{{
		name:  "turns on one channel merge into one",
		steps: []step{rec(0, 5), rec(0, 8), rec(1, 3), since(0, true, Turn{0, 8}, Turn{1, 3})},
	}, {
		name: "a turn that goes on across a mark stays after it",
		// Merged into the turn before the mark, it vanished from what a
		// restart from that snapshot follows, and the restarted subtask
		// consumed channel 1 before the rest of channel 0.
		steps: []step{rec(0, 5), mk(1), rec(0, 10), rec(1, 3), since(1, true, Turn{0, 10}, Turn{1, 3})},
	}, {
		name:  "trimming at a mark keeps the turn across it",
		steps: []step{rec(0, 5), mk(1), rec(0, 10), trim(1), since(1, true, Turn{0, 10})},
	}, {
		name:  "a mark with nothing logged after it follows nothing",
		steps: []step{rec(0, 5), mk(1), since(1, true)},
	}, {
		name: "trimming keeps the later marks",
		steps: []step{rec(0, 5), rec(0, 8), rec(1, 3), mk(1), rec(0, 12), mk(2), rec(1, 7), trim(1),
			since(2, true, Turn{1, 7})},
	}, {
		name:  "a trimmed checkpoint's predecessors are gone",
		steps: []step{rec(0, 5), mk(1), rec(1, 3), mk(2), trim(2), since(1, false)},
	}, {
		name:  "trimming at a checkpoint never marked changes nothing",
		steps: []step{rec(0, 5), mk(1), rec(1, 3), trim(7), since(0, true, Turn{0, 5}, Turn{1, 3})},
	}, {
		name: "following restarts the log from the checkpoint followed",
		steps: []step{rec(0, 5), mk(1), rec(0, 12), mk(2), rec(1, 7), trim(1), since(2, true, Turn{1, 7}),
			rec(0, 20), since(1, false), since(2, true, Turn{0, 20})},
	}, {
		name:  "a forgotten base cannot be followed",
		steps: []step{rec(0, 5), {forget: true}, since(0, false)},
	}, {
		name:  "a forgotten log reaches back again from a completed mark",
		steps: []step{{forget: true}, rec(0, 5), mk(3), rec(1, 2), trim(3), since(3, true, Turn{1, 2})},
	}} {
		t.Run(c.name, func(t *testing.T) {
			var d Log
			for i, s := range c.steps {
				switch {
				case s.record != nil:
					d.Record(s.record.Ch, s.record.UpTo)
				case s.mark != 0:
					d.Mark(s.mark)
				case s.trim != 0:
					d.Trim(s.trim)
				case s.forget:
					d.Forget()
				case s.since != nil:
					order, ok := d.Since(s.since.id)
					if ok != s.since.ok || !slices.Equal(order, s.since.order) {
						t.Fatalf("step %d: since %d = %v (ok %v), want %v (ok %v)", i, s.since.id, order, ok, s.since.order, s.since.ok)
					}
				}
			}
		})
	}
}
