package weirtest_test

import (
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// busyDeepJob is deepJob under backpressure, shaped as Nexmark q5: three
// sources feed a window count per key, whose three subtasks feed a
// second keyed window, so that every task merges three senders'
// barriers and the queues between them are full.
func busyDeepJob(p *weir.Pipeline, sink connector.Sink[windowCount]) {
	src := generator.New(300_000, func(i int64) event {
		return event{Key: int64(generator.Mix(21, uint64(i)) % 300), Time: i}
	}, generator.WithRate(1_000_000))
	s := weir.FromSource(p, "events", src, weir.WithTimestamps(func(e event) int64 { return e.Time }, 0))
	w := weir.WindowBy(weir.KeyBy(s, func(e event) int64 { return e.Key }), weir.Tumbling(20*time.Millisecond))
	counts := weir.AggregateWindow(w, countAgg{}, weir.Name("count"))
	asEvents := weir.Map(counts, func(c windowCount) event { return event{Key: c.Key % 7, Time: c.Window.End - 1} })
	w2 := weir.WindowBy(weir.KeyBy(asEvents, func(e event) int64 { return e.Key }), weir.Tumbling(100*time.Millisecond))
	weir.To(weir.AggregateWindow(w2, countAgg{}, weir.Name("per-bucket")), "sink", sink)
}

// Fine-grained failover must never leave a job waiting forever. Four
// failures per run, at random moments and at the named points, under
// backpressure, with checkpoints every 20 ms, so that failures abort
// checkpoints whose barriers are still on their way: a barrier of an
// aborted checkpoint used to start an alignment that could never end,
// and the job hung (the watchdog fails such a run with who waits on
// whom).
func TestOracleFineGrainedFailoverNeverHangs(t *testing.T) {
	for _, v := range []variant{variants[0], variants[1]} {
		t.Run(v.name, func(t *testing.T) {
			res := weirtest.Check(t, busyDeepJob, weirtest.Options[windowCount]{
				Guarantee: v.g, Seeds: seeds(8), Failures: 4, Parallelism: 3, Checkpoints: v.ck, Compare: compareCounts(v.g),
				Options: []weir.Option{weir.WithFailover(weir.FineGrainedFailover)},
			})
			if res.Injected == 0 || res.Recoveries == 0 {
				t.Fatalf("no failure was injected or recovered from: %+v", res)
			}
		})
	}
}
