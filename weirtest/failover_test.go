package weirtest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// twoPipelines is a job of two regions that share nothing but the sink
// object: keyed window counts of two event streams.
func twoPipelines(p *weir.Pipeline, sink connector.Sink[windowCount]) {
	for _, name := range []string{"left", "right"} {
		w := weir.WindowBy(weir.KeyBy(events(p, name, 20_000, uint64(len(name))), func(e event) int64 { return e.Key }), weir.Tumbling(500*time.Millisecond))
		weir.To(weir.AggregateWindow(w, countAgg{}, weir.Name(name+"-count")), name+"-sink", sink)
	}
}

// With fine-grained failover, failures injected at random moments and at
// the named points of the checkpoint protocol restart single regions, and
// the output keeps each guarantee.
func TestOracleFineGrainedFailover(t *testing.T) {
	for _, v := range []variant{variants[0], variants[1], variants[3]} { // the guarantees with checkpoints, and unaligned ones
		t.Run(v.name, func(t *testing.T) { checkFineGrained(t, twoPipelines, v) })
	}
}

// countingSource counts the times its readers are opened. It replays
// deterministically only if det says so.
type countingSource[T any] struct {
	connector.Source[T]
	opens *atomic.Int32
	det   bool
}

func (c countingSource[T]) Deterministic() bool { return c.det }

func (c countingSource[T]) Open(ctx context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[T], error) {
	c.opens.Add(1)
	return c.Source.Open(ctx, info, pos)
}

// A source subtask of one pipeline fails; with fine-grained failover the
// other pipeline's tasks never restart and its source never rewinds, and
// both outputs are exactly the failure-free ones. Of the failing
// pipeline, the failed subtask restarts alone when its source replays
// deterministically (its consumers drop the records they already have by
// sequence number); otherwise its consumers restart with it.
func TestFineGrainedFailoverLeavesOtherRegionsRunning(t *testing.T) {
	for _, det := range []bool{true, false} {
		t.Run(fmt.Sprintf("deterministic=%v", det), func(t *testing.T) { testFineGrainedRegions(t, det) })
	}
}

func testFineGrainedRegions(t *testing.T, det bool) {
	var opens [2]atomic.Int32
	var failed atomic.Bool
	job := func(p *weir.Pipeline, sink connector.Sink[windowCount]) {
		for i, name := range []string{"failing", "steady"} {
			src := generator.New(20_000, func(n int64) event {
				return event{Key: int64(generator.Mix(uint64(i+1), uint64(n)) % 40), Time: n}
			}, generator.WithRate(100_000))
			s := weir.FromSource(p, name, countingSource[event]{src, &opens[i], det}, weir.WithTimestamps(func(e event) int64 { return e.Time }, 0))
			if name == "failing" {
				s = weir.Map(s, func(e event) event {
					if e.Time == 12_000 && failed.CompareAndSwap(false, true) {
						panic(errors.New("the failing pipeline's map fails once"))
					}
					return e
				})
			}
			w := weir.WindowBy(weir.KeyBy(s, func(e event) int64 { return e.Key }), weir.Tumbling(500*time.Millisecond))
			weir.To(weir.AggregateWindow(w, countAgg{}, weir.Name(name+"-count")), name+"-sink", sink)
		}
	}
	failed.Store(true) // the reference run does not fail
	ref := referenceRun(t, job)
	failed.Store(false)
	opens[0].Store(0)
	opens[1].Store(0)

	got := weirtest.NewSink[windowCount]()
	p := fineGrainedRun(t, job, got, 20*time.Millisecond)
	rep := p.Report()
	if len(rep.Recoveries) != 1 || !failed.Load() {
		t.Fatalf("recoveries %+v, want exactly the one failure", rep.Recoveries)
	}
	rec := rep.Recoveries[0]
	want := 3 // the failed source subtask and the two window subtasks it feeds
	if det {
		want = 1
	}
	if rec.Restarted != want || rec.Subtasks != 8 || !strings.Contains(rec.Cause, "fails once") {
		t.Fatalf("recovery %+v: want %d of 8 subtasks restarted", rec, want)
	}
	if n := opens[1].Load(); n != 2 {
		t.Fatalf("the steady pipeline's source was opened %d times, want 2 (its two subtasks, never again)", n)
	}
	if n := opens[0].Load(); n != 3 {
		t.Fatalf("the failing pipeline's source was opened %d times, want 3 (two subtasks, and the failed one again)", n)
	}
	if err := weirtest.Equal(ref, got.Visible()); err != nil {
		t.Fatal(err)
	}
	if st := p.Status(); st.Failover != "fine-grained" {
		t.Fatalf("status shows %q failover", st.Failover)
	}
}

// referenceRun runs job once at parallelism 2 without failures (the
// caller disarms its failure hooks first) and returns what it wrote.
func referenceRun(t *testing.T, job func(*weir.Pipeline, connector.Sink[windowCount])) []windowCount {
	t.Helper()
	ref := weirtest.NewSink[windowCount]()
	p := weir.NewPipeline(weir.WithParallelism(2))
	job(p, ref)
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ref.Values()
}

// fineGrainedRun runs job exactly-once at parallelism 2 with fine-grained
// failover and checkpoints every interval, writing into sink, and returns
// the pipeline once it finished.
func fineGrainedRun(t *testing.T, job func(*weir.Pipeline, connector.Sink[windowCount]), sink connector.Sink[windowCount], interval time.Duration, opts ...weir.Option) *weir.Pipeline {
	t.Helper()
	opts = append([]weir.Option{weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce), weir.WithFailover(weir.FineGrainedFailover),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: interval})}, opts...)
	p := weir.NewPipeline(opts...)
	job(p, sink)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkFineGrained runs the oracle on job with fine-grained failover.
func checkFineGrained(t *testing.T, job func(*weir.Pipeline, connector.Sink[windowCount]), v variant) {
	res := weirtest.Check(t, job, weirtest.Options[windowCount]{
		Guarantee: v.g, Seeds: seeds(schedulesPerJob), Checkpoints: v.ck, Compare: compareCounts(v.g),
		Options: []weir.Option{weir.WithFailover(weir.FineGrainedFailover)},
	})
	if res.Injected == 0 || res.Recoveries == 0 {
		t.Fatalf("no failure was injected or recovered from: %+v", res)
	}
}
