package weir_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
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
	v *weir.ValueState[string, int64]
}

var value1k = string(make([]byte, 1000))

func (f *kbValue) Open(sc *weir.StateContext[int64]) error {
	f.v = weir.NewValueState[string](sc, "v")
	return nil
}

// Deterministic: the function reads no clock and sets no timers, so under
// fine-grained failover its task restarts alone and can have an active
// standby.
func (*kbValue) Deterministic() bool { return true }

func (f *kbValue) ProcessElement(ctx *weir.KeyedContext[int64, int64], n int64) error {
	f.v.Update(value1k)
	ctx.Emit(n)
	return nil
}

// BenchmarkRecoveryByState runs a keyed job at 100,000 events/s with 10
// MB or 100 MB of keyed state (1 KB per key), parallelism 2, exactly-once
// checkpoints every second; one keyed subtask is killed once, 2 s after
// the state is built (its primary, when it has a standby). It reports the recovery time (failure to the restarted
// tasks' first output), the longest output pause of the keyed subtask
// that did not fail (its key groups) and of the failed one, and the
// records the sources read again, under global and fine-grained failover,
// fine-grained with active standbys, and the pauses of a run without
// failure (with and without standbys) as the baseline. Chaining is off,
// so that the keyed task has an output (to its sink) and can have a
// standby.
func BenchmarkRecoveryByState(b *testing.B) {
	sizes := []int64{10, 100}
	if s := os.Getenv("WEIR_STATE_MB"); s != "" {
		// One size instead, such as 1024: 1 GB takes minutes per mode
		// and some 10 GB of memory.
		mb, err := strconv.ParseInt(s, 10, 64)
		if err != nil || mb < 1 {
			b.Fatalf("WEIR_STATE_MB=%q: want a number of megabytes", s)
		}
		sizes = []int64{mb}
	}
	for _, mb := range sizes {
		for _, mode := range []string{"no-failure", "no-failure-standby", "global", "fine-grained", "active-standby"} {
			opts := []weir.Option{weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce), weir.WithChaining(false),
				weir.WithCheckpoints(weir.CheckpointConfig{Interval: time.Second})}
			if mode != "global" {
				opts = append(opts, weir.WithFailover(weir.FineGrainedFailover))
			}
			if strings.HasSuffix(mode, "standby") {
				opts = append(opts, weir.WithActiveStandby())
			}
			noFailure := strings.HasPrefix(mode, "no-failure")
			b.Run(fmt.Sprintf("%dMB/%s", mb, mode), func(b *testing.B) {
				keys := mb << 10 // 1 KB each
				total := keys + 400_000
				failAt := keys + 200_000
				var recovery, steadyGap, failedGap time.Duration
				var reread int64
				for range b.N {
					var read atomic.Int64
					reached := make(chan struct{})
					var once sync.Once
					sink := &subtaskGaps{times: map[int][]time.Time{}}
					p := weir.NewPipeline(opts...)
					src := generator.New(total, func(n int64) int64 {
						read.Add(1)
						if n == failAt {
							once.Do(func() { close(reached) })
						}
						return n
					}, generator.WithRate(100_000))
					s := weir.FromSource(p, "events", src, weir.WithTimestamps(func(n int64) int64 { return n }, 0))
					keyed := weir.KeyBy(s, func(n int64) int64 {
						if n < keys {
							return n
						}
						return int64(generator.Mix(1, uint64(n)) % uint64(keys))
					})
					out := weir.Process(keyed, func() weir.KeyedProcessFunction[int64, int64, int64] { return &kbValue{} })
					weir.To(out, "sink", sink)
					done := make(chan error, 1)
					go func() { done <- p.Run(context.Background()) }()
					if !noFailure {
						select {
						case <-reached:
							weir.KillForTest(p, "process", 0, false)
						case err := <-done:
							b.Fatalf("the job ended before the kill: %v", err)
						}
					}
					if err := <-done; err != nil {
						b.Fatal(err)
					}
					rep := p.Report()
					want := 1
					if noFailure {
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
				b.ReportMetric(float64(recovery/n)/1e6, "recovery-ms")
				b.ReportMetric(float64((steadyGap / n).Milliseconds()), "steady-pause-ms")
				b.ReportMetric(float64((failedGap / n).Milliseconds()), "failed-pause-ms")
				b.ReportMetric(float64(reread)/float64(b.N), "reread-records")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
