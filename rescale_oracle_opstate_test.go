package weir_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weir-stream/weir"
)

// The rescale oracle of the operators with broadcast and operator state
// (rescale_oracle_test.go has the harness).

// threshold is a rule of the broadcast job: from event time Time on, a
// value passes when it is at least Min.
type threshold struct{ Time, Min int64 }

// ruleOf makes every 40th record a rule.
func ruleOf(e oev) (threshold, bool) {
	return threshold{Time: e.Time, Min: e.Val%7 + 3}, e.I%40 == 0
}

// alerts keeps the rules in broadcast state by the time they start and
// the keyed records' values by time in map state; an event-time timer
// at each record's time judges the record by the latest rule at or
// before it. Decided on timers, the output depends on neither the
// interleaving of the two inputs nor the parallelism.
type alerts struct {
	vals  *weir.MapState[int64, int64, int64]
	rules *weir.BroadcastState[int64, int64]
}

func (f *alerts) Open(sc *weir.StateContext[int64]) error {
	f.vals = weir.NewMapState[int64, int64](sc, "vals")
	return nil
}

func (f *alerts) OpenBroadcast(bc *weir.BroadcastStateContext) error {
	f.rules = weir.NewBroadcastState[int64, int64](bc, "rules")
	return nil
}

func (f *alerts) ProcessBroadcastElement(_ *weir.BroadcastContext[string], r threshold) error {
	f.rules.Put(r.Time, r.Min)
	return nil
}

func (f *alerts) ProcessElement(ctx *weir.KeyedContext[int64, string], e oev) error {
	f.vals.Put(e.Time, e.Val)
	ctx.RegisterEventTimer(e.Time)
	return nil
}

func (f *alerts) OnTimer(ctx *weir.KeyedContext[int64, string], t int64, _ weir.TimeDomain) error {
	v, _ := f.vals.Get(t)
	f.vals.Delete(t)
	at, min := int64(-1), int64(0)
	f.rules.All(func(rt, m int64) bool {
		if rt <= t && rt > at {
			at, min = rt, m
		}
		return true
	})
	ctx.Emit(judged(ctx.Key(), t, v, at, min))
	return nil
}

func judged(key, t, v, ruleAt, min int64) string {
	verdict := "ok"
	if v >= min {
		verdict = "alert"
	}
	return fmt.Sprintf("%d@%d: %d against rule@%d (min %d): %s", key, t, v, ruleAt, min, verdict)
}

// alertsReference judges every record by brute force.
func alertsReference(es []oev) []string {
	var rules []threshold
	for _, e := range es {
		if r, ok := ruleOf(e); ok {
			rules = append(rules, r)
		}
	}
	var out []string
	for _, e := range es {
		at, min := int64(-1), int64(0)
		for _, r := range rules {
			if r.Time <= e.Time && r.Time > at {
				at, min = r.Time, r.Min
			}
		}
		out = append(out, judged(e.Key, e.Time, e.Val, at, min))
	}
	slices.Sort(out)
	return out
}

// broadcastJob judges the records of in by the rules in it, broadcast.
func broadcastJob(in weir.Stream[oev]) weir.Stream[string] {
	rules := weir.FlatMap(in, func(e oev, emit func(threshold)) {
		if r, ok := ruleOf(e); ok {
			emit(r)
		}
	}, weir.Name("rules"))
	return weir.ProcessBroadcast(weir.KeyBy(in, oevKey), rules,
		func() weir.KeyedBroadcastProcessFunction[int64, oev, threshold, string] { return &alerts{} },
		weir.Name("alerts"), weir.UID("alerts"))
}

func TestBroadcastJobMatchesTheBruteForceReference(t *testing.T) {
	es := make([]oev, oracleRecords)
	for i := range es {
		es[i] = oevAt(int64(i))
	}
	want := alertsReference(es)
	got := oracleReference(t, broadcastJob)
	if !slices.Equal(got, want) {
		t.Fatalf("not the brute-force judgement\n%s", multisetDiff(got, want))
	}
}

func TestRescaleOracleOfBroadcastAndOperatorState(t *testing.T) {
	cases := []oracleCase{
		{"broadcast state", broadcastJob, 1290, []int{1, 3, 8}, []restoreFrom{fromSavepoint, fromCheckpoint, fromSavepoint}},
		{"async ordered", asyncJob(true, 1375), 1375, []int{1, 3, 8}, []restoreFrom{fromSavepoint, fromCheckpoint, fromSavepoint}},
		{"operator list state", bufferJob, 1111, []int{1, 3, 8}, []restoreFrom{fromSavepoint, fromCheckpoint, fromSavepoint}},
		{"async unordered", asyncJob(false, 1234), 1234, []int{1, 3, 8}, []restoreFrom{fromCheckpoint, fromSavepoint, fromSavepoint}},
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

// asyncJob looks every record up through an asynchronous call, ordered
// or not (then after a rebalance, so the call runs in a task fed by a
// gate rather than in the source's). The calls of the 20 records before
// cut take 100ms, so that the stop at the cut finds them in flight and
// the restored run must call again for them.
func asyncJob(ordered bool, cut int64) oracleJob {
	call := func(ctx context.Context, e oev) (string, error) {
		d := time.Duration(e.I%3) * 100 * time.Microsecond
		if e.I >= cut-20 && e.I < cut {
			d = 100 * time.Millisecond
		}
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		return fmt.Sprintf("%d looked up: %d", e.I, e.Key*e.Val), nil
	}
	return func(in weir.Stream[oev]) weir.Stream[string] {
		cfg := weir.AsyncConfig[oev, string]{Capacity: 8}
		if ordered {
			return weir.AsyncOrdered(in, call, cfg, weir.Name("lookup"), weir.UID("lookup"))
		}
		return weir.AsyncUnordered(weir.Rebalance(in), call, cfg, weir.Name("lookup"), weir.UID("lookup"))
	}
}

// buffer holds records in operator list state and lets them go ten at a
// time, and the rest at the end of input: a sink-like buffer whose
// records in the buffer at a checkpoint must come out once after a
// restore, whichever subtask takes them.
type buffer struct {
	held *weir.OperatorListState[oev]
}

func (b *buffer) Open(oc *weir.OperatorStateContext) error {
	b.held = weir.NewOperatorListState[oev](oc, "held")
	return nil
}

func (b *buffer) ProcessElement(ctx *weir.OperatorContext[string], e oev) error {
	b.held.Add(e)
	if len(b.held.Get()) >= 10 {
		b.release(ctx)
	}
	return nil
}

func (b *buffer) SnapshotState(int64) error { return nil }

func (b *buffer) EndInput(ctx *weir.OperatorContext[string]) error {
	b.release(ctx)
	return nil
}

func (b *buffer) release(ctx *weir.OperatorContext[string]) {
	for _, e := range b.held.Get() {
		ctx.EmitAt(e.Time, fmt.Sprintf("%d released: %d", e.I, e.Val))
	}
	b.held.Clear()
}

// bufferJob runs buffer after a rebalance.
func bufferJob(in weir.Stream[oev]) weir.Stream[string] {
	return weir.ProcessOperator(weir.Rebalance(in), func() weir.CheckpointedFunction[oev, string] { return &buffer{} },
		weir.Name("buffer"), weir.UID("buffer"))
}
