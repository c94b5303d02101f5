package weirtest_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
)

// gapSink records when each batch arrives, to find the longest pause of
// a pipeline's output.
type gapSink struct {
	mu    sync.Mutex
	times []time.Time
	n     atomic.Int64
}

func (g *gapSink) Open(context.Context, connector.SubtaskInfo) (connector.Writer[event], error) {
	return g, nil
}

func (g *gapSink) Write(_ context.Context, b []event) error {
	g.mu.Lock()
	g.times = append(g.times, time.Now())
	g.mu.Unlock()
	g.n.Add(int64(len(b)))
	return nil
}
func (g *gapSink) Flush(context.Context) error { return nil }
func (g *gapSink) Close() error                { return nil }
func (g *gapSink) Idempotent() bool            { return true }

func (g *gapSink) maxGap() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	var m time.Duration
	for i := 1; i < len(g.times); i++ {
		m = max(m, g.times[i].Sub(g.times[i-1]))
	}
	return m
}

// BenchmarkFailover runs two independent pipelines of 100,000 events/s
// each for 3 seconds; one fails once after 1 second. It reports, for the
// other pipeline, the longest pause of its output and the records its
// source read again, under global and fine-grained failover.
func BenchmarkFailover(b *testing.B) {
	for _, f := range []weir.Failover{weir.GlobalFailover, weir.FineGrainedFailover} {
		b.Run(f.String(), func(b *testing.B) {
			var gap time.Duration
			var reread int64
			for range b.N {
				var failed atomic.Bool
				var read atomic.Int64
				steady := &gapSink{}
				p := weir.NewPipeline(weir.WithParallelism(1), weir.WithGuarantee(weir.AtLeastOnce), weir.WithFailover(f),
					weir.WithCheckpoints(weir.CheckpointConfig{Interval: 500 * time.Millisecond}))
				for _, name := range []string{"failing", "steady"} {
					src := generator.New(300_000, func(n int64) event {
						if name == "steady" {
							read.Add(1)
						}
						return event{Key: n % 40, Time: n}
					}, generator.WithRate(100_000))
					s := weir.FromSource(p, name, src, weir.WithTimestamps(func(e event) int64 { return e.Time }, 0))
					if name == "failing" {
						s = weir.Map(s, func(e event) event {
							if e.Time == 100_000 && failed.CompareAndSwap(false, true) {
								panic(errors.New("injected"))
							}
							return e
						})
						weir.To(s, name+"-sink", &gapSink{})
					} else {
						weir.To(s, name+"-sink", steady)
					}
				}
				if err := p.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
				gap = max(gap, steady.maxGap())
				reread += read.Load() - 300_000
			}
			b.ReportMetric(float64(gap.Milliseconds()), "max-pause-ms")
			b.ReportMetric(float64(reread)/float64(b.N), "reread-records")
		})
	}
}
