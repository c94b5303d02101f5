package weir_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
)

// discard is a sink that drops everything.
type discard[T any] struct{}

func (discard[T]) Open(context.Context, connector.SubtaskInfo) (connector.Writer[T], error) {
	return discard[T]{}, nil
}
func (discard[T]) Write(context.Context, []T) error { return nil }
func (discard[T]) Flush(context.Context) error      { return nil }
func (discard[T]) Close() error                     { return nil }

// runBench runs p as the benchmark's body and reports events per second of
// wall time and per CPU-second of the process (user and system time, from
// getrusage), which is what "per core" means on a shared machine.
func runBench(b *testing.B, p *weir.Pipeline) {
	b.Helper()
	cpu0 := cpuTime()
	b.ResetTimer()
	if err := p.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "events/cpu-s")
	b.ReportMetric(0, "ns/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStatelessChain measures generator -> map -> filter -> discard,
// all chained into one task per subtask. One op is one event.
func BenchmarkStatelessChain(b *testing.B) {
	for _, par := range []int{1, 2} {
		b.Run(fmt.Sprintf("p%d", par), func(b *testing.B) {
			p := weir.NewPipeline(weir.WithParallelism(par))
			src := weir.FromSource(p, "gen", generator.Sequence(0, int64(b.N)))
			m := weir.Map(src, func(v int64) int64 { return v * 3 })
			f := weir.Filter(m, func(v int64) bool { return v&1 == 0 })
			weir.To(f, "discard", discard[int64]{})
			runBench(b, p)
		})
	}
}

type keyEvent struct {
	Key  int64
	Time int64
}

type countAgg struct{}

func (countAgg) Create() int64                 { return 0 }
func (countAgg) Add(n int64, _ keyEvent) int64 { return n + 1 }
func (countAgg) Merge(a, b int64) int64        { return a + b }
func (countAgg) Result(n int64) int64          { return n }

// BenchmarkWindowCount measures a keyed tumbling-window count over 10k
// keys: generator -> hash exchange -> window -> discard. One op is one
// event.
func BenchmarkWindowCount(b *testing.B) {
	for _, par := range []int{1, 2} {
		b.Run(fmt.Sprintf("p%d", par), func(b *testing.B) {
			p := weir.NewPipeline(weir.WithParallelism(par))
			src := weir.FromSource(p, "gen", generator.New(int64(b.N), func(i int64) keyEvent {
				return keyEvent{Key: int64(generator.Mix(1, uint64(i)) % 10000), Time: i / 100}
			}), weir.WithTimestamps(func(e keyEvent) int64 { return e.Time }, 0))
			w := weir.WindowBy(weir.KeyBy(src, func(e keyEvent) int64 { return e.Key }), weir.Tumbling(time.Second))
			weir.To(weir.AggregateWindow(w, countAgg{}), "discard", discard[weir.Windowed[int64, int64]]{})
			runBench(b, p)
		})
	}
}

// BenchmarkLatencyTracking measures the keyed window count with latency
// tracking off, sampled (a marker every 200ms per source subtask) and
// full (a marker after every batch), parallelism 2.
func BenchmarkLatencyTracking(b *testing.B) {
	for _, mode := range []struct {
		name     string
		interval time.Duration
	}{{"off", 0}, {"sampled", 200 * time.Millisecond}, {"full", -1}} {
		b.Run(mode.name, func(b *testing.B) {
			p := weir.NewPipeline(weir.WithParallelism(2), weir.WithLatencyTracking(mode.interval))
			src := weir.FromSource(p, "gen", generator.New(int64(b.N), func(i int64) keyEvent {
				return keyEvent{Key: int64(generator.Mix(1, uint64(i)) % 10000), Time: i / 100}
			}), weir.WithTimestamps(func(e keyEvent) int64 { return e.Time }, 0))
			w := weir.WindowBy(weir.KeyBy(src, func(e keyEvent) int64 { return e.Key }), weir.Tumbling(time.Second))
			weir.To(weir.AggregateWindow(w, countAgg{}), "discard", discard[weir.Windowed[int64, int64]]{})
			runBench(b, p)
		})
	}
}
