package weirtest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// The oracle of the operators with broadcast state, operator state and
// asynchronous calls: each job's output is decided by event time alone,
// so a failure-free run is the reference of runs with failures injected,
// exactly once, and of runs stopped with a savepoint and restored at
// another parallelism.

// rule is a broadcast rule: from event time From on, an event passes when
// its key is at least Min.
type rule struct{ From, Min int64 }

// ruled keeps the rules in broadcast state and judges each event on an
// event-time timer at its time by the latest rule from at or before it.
type ruled struct {
	rules   *weir.BroadcastState[int64, int64]
	pending *weir.MapState[int64, int64, int64] // events by time
}

func (f *ruled) Open(sc *weir.StateContext[int64]) error {
	f.pending = weir.NewMapState[int64, int64](sc, "pending")
	return nil
}

func (f *ruled) OpenBroadcast(bc *weir.BroadcastStateContext) error {
	f.rules = weir.NewBroadcastState[int64, int64](bc, "rules")
	return nil
}

func (f *ruled) ProcessBroadcastElement(_ *weir.BroadcastContext[string], r rule) error {
	f.rules.Put(r.From, r.Min)
	return nil
}

func (f *ruled) ProcessElement(ctx *weir.KeyedContext[int64, string], e event) error {
	n, _ := f.pending.Get(e.Time)
	f.pending.Put(e.Time, n+1)
	ctx.RegisterEventTimer(e.Time)
	return nil
}

func (f *ruled) OnTimer(ctx *weir.KeyedContext[int64, string], t int64, _ weir.TimeDomain) error {
	n, _ := f.pending.Get(t)
	f.pending.Delete(t)
	from, min := int64(-1), int64(0)
	f.rules.All(func(at, m int64) bool {
		if at <= t && at > from {
			from, min = at, m
		}
		return true
	})
	ctx.Emit(fmt.Sprintf("%d@%d x%d: rule@%d min %d pass %t", ctx.Key(), t, n, from, min, ctx.Key() >= min))
	return nil
}

// broadcastJob judges n generated events by rules from a second source
// with one subtask, a rule every 100ms of event time, broadcast to every
// subtask of the judge.
func broadcastJob(n int64) weirtest.Job[string] {
	return func(p *weir.Pipeline, sink connector.Sink[string]) { broadcastJudge(p, sink, n) }
}

func broadcastJudge(p *weir.Pipeline, sink connector.Sink[string], n int64) {
	in := events(p, "events", n, 1)
	src := generator.New(n/100, func(i int64) rule { return rule{From: i * 100, Min: int64(generator.Mix(7, uint64(i)) % 40)} },
		generator.WithRate(1_000))
	rules := weir.FromSource(p, "rules", src, weir.WithTimestamps(func(r rule) int64 { return r.From }, 0),
		weir.SourceParallelism(1))
	judged := weir.ProcessBroadcast(weir.KeyBy(in, func(e event) int64 { return e.Key }), rules,
		func() weir.KeyedBroadcastProcessFunction[int64, event, rule, string] { return &ruled{} }, weir.UID("judge"))
	weir.To(judged, "sink", sink)
}

// exactlyOnceVariants are the variants whose guarantee is exactly-once:
// the jobs here keep counts in state, which at-least-once replays
// change.
func exactlyOnceVariants() []variant {
	var out []variant
	for _, v := range variants {
		if v.g == weir.ExactlyOnce {
			out = append(out, v)
		}
	}
	return out
}

func TestOracleBroadcastState(t *testing.T) {
	for _, v := range exactlyOnceVariants() {
		t.Run(v.name, func(t *testing.T) {
			res := weirtest.Check(t, broadcastJob(20_000), weirtest.Options[string]{Guarantee: v.g, Checkpoints: v.ck, Seeds: seeds(6)})
			report(t, res)
		})
	}
}

func TestOracleSavepointsOfBroadcastState(t *testing.T) {
	s := seeds(3)
	checkSavepoints(t, weirtest.CheckSavepoints(t, broadcastJob(100_000), weirtest.Options[string]{Seeds: s}, restoreAt), len(s))
}

// asyncJob looks each event up through an asynchronous call, ordered or
// not, after a rebalance; calls take up to a millisecond, so records are
// in flight at every checkpoint, and a window counts the results per key,
// which a result late for its watermark would miss.
func asyncJob(ordered bool, n int64) weirtest.Job[string] {
	call := func(ctx context.Context, e event) (event, error) {
		select {
		case <-time.After(time.Duration(e.Time%10) * 100 * time.Microsecond):
		case <-ctx.Done():
			return event{}, ctx.Err()
		}
		return event{Key: e.Key % 10, Time: e.Time}, nil
	}
	return func(p *weir.Pipeline, sink connector.Sink[string]) {
		in := weir.Rebalance(events(p, "events", n, 3))
		cfg := weir.AsyncConfig[event, event]{Capacity: 16}
		var res weir.Stream[event]
		if ordered {
			res = weir.AsyncOrdered(in, call, cfg, weir.UID("lookup"))
		} else {
			res = weir.AsyncUnordered(in, call, cfg, weir.UID("lookup"))
		}
		w := weir.WindowBy(weir.KeyBy(res, func(e event) int64 { return e.Key }), weir.Tumbling(50*time.Millisecond))
		counts := weir.AggregateWindow(w, countAgg{})
		weir.To(weir.Map(counts, func(c windowCount) string {
			return fmt.Sprintf("%d [%d,%d): %d", c.Key, c.Window.Start, c.Window.End, c.Value)
		}), "sink", sink)
	}
}

func TestOracleAsyncCalls(t *testing.T) {
	for _, ordered := range []bool{true, false} {
		for _, v := range exactlyOnceVariants() {
			t.Run(fmt.Sprintf("ordered %t %s", ordered, v.name), func(t *testing.T) {
				res := weirtest.Check(t, asyncJob(ordered, 20_000), weirtest.Options[string]{Guarantee: v.g, Checkpoints: v.ck, Seeds: seeds(4)})
				report(t, res)
			})
		}
	}
}

func TestOracleSavepointsOfAsyncCalls(t *testing.T) {
	s := seeds(3)
	checkSavepoints(t, weirtest.CheckSavepoints(t, asyncJob(false, 100_000), weirtest.Options[string]{Seeds: s}, restoreAt), len(s))
}

// batcher holds events in operator list state and lets them go 25 at a
// time, the rest at the end of input.
type batcher struct {
	held *weir.OperatorListState[event]
}

func (b *batcher) Open(oc *weir.OperatorStateContext) error {
	b.held = weir.NewOperatorListState[event](oc, "held")
	return nil
}

func (b *batcher) ProcessElement(ctx *weir.OperatorContext[event], e event) error {
	if b.held.Add(e); len(b.held.Get()) >= 25 {
		b.EndInput(ctx)
	}
	return nil
}

func (b *batcher) SnapshotState(int64) error { return nil }

func (b *batcher) EndInput(ctx *weir.OperatorContext[event]) error {
	for _, e := range b.held.Get() {
		ctx.EmitAt(e.Time, e)
	}
	b.held.Clear()
	return nil
}

// batchJob batches events after a rebalance.
func batchJob(n int64) weirtest.Job[event] {
	return func(p *weir.Pipeline, sink connector.Sink[event]) {
		in := weir.Rebalance(events(p, "events", n, 5))
		weir.To(weir.ProcessOperator(in, func() weir.CheckpointedFunction[event, event] { return &batcher{} }, weir.UID("batch")), "sink", sink)
	}
}

func TestOracleOperatorListState(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			res := weirtest.Check(t, batchJob(20_000), weirtest.Options[event]{Guarantee: v.g, Checkpoints: v.ck, Seeds: seeds(4)})
			report(t, res)
		})
	}
}

func TestOracleSavepointsOfOperatorListState(t *testing.T) {
	s := seeds(3)
	checkSavepoints(t, weirtest.CheckSavepoints(t, batchJob(100_000), weirtest.Options[event]{Seeds: s}, restoreAt), len(s))
}
