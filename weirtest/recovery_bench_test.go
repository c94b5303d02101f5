package weirtest_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
)

// subtaskGaps records when each subtask's sink writes, to find the
// longest pause of each subtask's output.
type subtaskGaps struct {
	mu    sync.Mutex
	times map[int][]time.Time
}

type gapWriter struct {
	g       *subtaskGaps
	subtask int
}

func (g *subtaskGaps) Open(_ context.Context, info connector.SubtaskInfo) (connector.Writer[int64], error) {
	return gapWriter{g, info.Subtask}, nil
}

func (w gapWriter) Write(context.Context, []int64) error {
	w.g.mu.Lock()
	w.g.times[w.subtask] = append(w.g.times[w.subtask], time.Now())
	w.g.mu.Unlock()
	return nil
}
func (gapWriter) Flush(context.Context) error { return nil }
func (gapWriter) Close() error                { return nil }

// Idempotent lets exactly-once jobs use the sink: it keeps only times.
func (*subtaskGaps) Idempotent() bool { return true }

func (g *subtaskGaps) maxGap(subtask int) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	ts := g.times[subtask]
	var m time.Duration
	for i := 1; i < len(ts); i++ {
		m = max(m, ts[i].Sub(ts[i-1]))
	}
	return m
}

// kbValue keeps about 1 KB of state per key and passes records on.
type kbValue struct {
	v    *weir.ValueState[string, int64]
	fail func(int64)
}

var value1k = string(make([]byte, 1000))

func (f *kbValue) Open(sc *weir.StateContext[int64]) error {
	f.v = weir.NewValueState[string](sc, "v")
	return nil
}

func (f *kbValue) ProcessElement(ctx *weir.KeyedContext[int64, int64], n int64) error {
	f.fail(n)
	f.v.Update(value1k)
	ctx.Emit(n)
	return nil
}

// BenchmarkRecoveryByState runs a keyed job at 100,000 events/s with 10
// MB or 100 MB of keyed state (1 KB per key), parallelism 2, exactly-once
// checkpoints every second; one keyed subtask fails once, 2 s after the
// state is built. It reports the recovery time (failure to the restarted
// tasks' first output), the longest output pause of the keyed subtask
// that did not fail (its key groups) and of the failed one, and the
// records the sources read again, under global and fine-grained failover,
// and the pauses of a run without failure as the baseline.
func BenchmarkRecoveryByState(b *testing.B) {
	for _, mb := range []int64{10, 100} {
		for _, mode := range []string{"no-failure", "global", "fine-grained"} {
			f, _ := weir.ParseFailover(mode)
			b.Run(fmt.Sprintf("%dMB/%s", mb, mode), func(b *testing.B) {
				keys := mb << 10 // 1 KB each
				total := keys + 400_000
				failAt := keys + 200_000
				var recovery, steadyGap, failedGap time.Duration
				var reread int64
				for range b.N {
					var failed atomic.Bool
					failed.Store(mode == "no-failure")
					var read atomic.Int64
					sink := &subtaskGaps{times: map[int][]time.Time{}}
					p := weir.NewPipeline(weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce), weir.WithFailover(f),
						weir.WithCheckpoints(weir.CheckpointConfig{Interval: time.Second}))
					src := generator.New(total, func(n int64) int64 {
						read.Add(1)
						return n
					}, generator.WithRate(100_000))
					s := weir.FromSource(p, "events", src, weir.WithTimestamps(func(n int64) int64 { return n }, 0))
					keyed := weir.KeyBy(s, func(n int64) int64 {
						if n < keys {
							return n
						}
						return int64(generator.Mix(1, uint64(n)) % uint64(keys))
					})
					out := weir.Process(keyed, func() weir.KeyedProcessFunction[int64, int64, int64] {
						return &kbValue{fail: func(n int64) {
							if n >= failAt && failed.CompareAndSwap(false, true) {
								panic(errors.New("injected"))
							}
						}}
					})
					weir.To(out, "sink", sink)
					if err := p.Run(context.Background()); err != nil {
						b.Fatal(err)
					}
					rep := p.Report()
					want := 1
					if mode == "no-failure" {
						want = 0
					}
					if len(rep.Recoveries) != want {
						b.Fatalf("recoveries %+v, want %d", rep.Recoveries, want)
					}
					if len(rep.Recoveries) > 0 {
						recovery += rep.Recoveries[0].Duration
					}
					// The failed subtask is the one whose output paused longest.
					g0, g1 := sink.maxGap(0), sink.maxGap(1)
					steadyGap += min(g0, g1)
					failedGap += max(g0, g1)
					reread += read.Load() - total
				}
				n := time.Duration(b.N)
				b.ReportMetric(float64((recovery / n).Milliseconds()), "recovery-ms")
				b.ReportMetric(float64((steadyGap / n).Milliseconds()), "steady-pause-ms")
				b.ReportMetric(float64((failedGap / n).Milliseconds()), "failed-pause-ms")
				b.ReportMetric(float64(reread)/float64(b.N), "reread-records")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
