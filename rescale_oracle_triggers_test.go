package weir_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weir-stream/weir"
)

// The rescale oracle of windows with triggers, and of processing-time
// session windows. Count windows and count
// triggers depend on the order of each key's records, so these jobs key
// by split (the record's index mod oracleSplits): each key's records
// then come from one split, read in index order before and after the
// cut, whatever the parallelism.

func splitKey(e oev) int64 { return e.I % oracleSplits }

// span describes a firing by its key, window and the indices it saw.
func span(key int64, w weir.Window, recs []oev, emit func(string)) error {
	emit(fmt.Sprintf("%d [%d,%d): %d..%d (%d)", key, w.Start, w.End, recs[0].I, recs[len(recs)-1].I, len(recs)))
	return nil
}

// countWindowsJob runs tumbling count windows of 5 and sliding ones of
// 6 every 4: their buffered records and counts cross the cut.
func countWindowsJob(in weir.Stream[oev]) weir.Stream[string] {
	ks := weir.KeyBy(in, splitKey)
	tumbling := weir.ProcessWindow(weir.CountWindow(ks, 5), span, weir.Name("count tumbling"))
	sliding := weir.ProcessWindow(weir.CountWindow(ks, 6, 4), span, weir.Name("count sliding"))
	return weir.Union(tumbling, sliding)
}

// customTriggerJob fires 40ms windows every 3 records and at their end
// (everyNOrEnd, with its count in trigger state and a timer per window).
func customTriggerJob(in weir.Stream[oev]) weir.Stream[string] {
	w := weir.WindowBy(weir.KeyBy(in, splitKey), weir.Tumbling(40*time.Millisecond)).Trigger(newEveryNOrEnd[oev](3))
	return weir.ProcessWindow(w, span, weir.Name("custom trigger"))
}

// processingTimeSessionsJob sessionizes each key's records by arrival
// with the given gap and emits each record of a session with its key.
// Which session holds a record depends on timing; that each record is
// emitted once, across a stop and a restore at another parallelism,
// does not. With a gap of an hour every session is still open at the
// cut: the records before it reach the output only through the
// sessions' state, restored by key group, and fire when the restored
// run's input ends.
func processingTimeSessionsJob(gap time.Duration) oracleJob {
	return func(in weir.Stream[oev]) weir.Stream[string] {
		w := weir.WindowBy(weir.KeyBy(in, oevKey), weir.SessionProcessingTime(gap))
		return weir.ProcessWindow(w, func(key int64, _ weir.Window, recs []oev, emit func(string)) error {
			for _, r := range recs {
				emit(fmt.Sprintf("key %d: %d", key, r.I))
			}
			return nil
		}, weir.Name("processing-time sessions"))
	}
}

func TestRescaleOracleOfTriggeredWindows(t *testing.T) {
	cases := []oracleCase{
		{"count windows", countWindowsJob, 1234, []int{1, 3, 8}, []restoreFrom{fromSavepoint, fromCheckpoint, fromSavepoint}},
		{"custom trigger", customTriggerJob, 1321, []int{1, 3, 8}, []restoreFrom{fromCheckpoint, fromSavepoint, fromSavepoint}},
		{"processing-time sessions", processingTimeSessionsJob(5 * time.Millisecond), 1234, []int{1, 3}, []restoreFrom{fromSavepoint, fromCheckpoint}},
		{"processing-time sessions open at the cut", processingTimeSessionsJob(time.Hour), 1500, []int{1, 3, 8}, []restoreFrom{fromSavepoint, fromSavepoint, fromCheckpoint}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := oracleReference(t, c.job)
			for i, par := range c.to {
				t.Run(fmt.Sprintf("p%d from %s", par, c.from[i]), func(t *testing.T) {
					got := stoppedAndRestored(t, c.job, c.cut, par, c.from[i])
					if !slices.Equal(got, want) {
						t.Fatalf("restored at parallelism %d from a %s: not exactly-once\n%s", par, c.from[i], multisetDiff(got, want))
					}
				})
			}
		})
	}
}
