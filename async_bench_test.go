package weir_test

import (
	"context"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/generator"
)

// slowLookup stands in for a call to an external service that answers after
// a fixed latency.
func slowLookup(ctx context.Context, v int64) (int64, error) {
	t := time.NewTimer(time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return v * 2, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// BenchmarkAsyncCalls compares calling a service with 1 ms of latency
// from a Map (one call at a time per subtask) with AsyncOrdered and
// AsyncUnordered (up to Capacity calls in flight per subtask), at
// parallelism 1. One op is one record; events/s is the figure to compare.
func BenchmarkAsyncCalls(b *testing.B) {
	run := func(b *testing.B, call func(weir.Stream[int64]) weir.Stream[int64]) {
		p := weir.NewPipeline(weir.WithParallelism(1))
		src := weir.FromSource(p, "gen", generator.Sequence(0, int64(b.N)))
		weir.To(call(src), "discard", discard[int64]{})
		runBench(b, p)
	}
	b.Run("map", func(b *testing.B) {
		run(b, func(s weir.Stream[int64]) weir.Stream[int64] {
			return weir.Map(s, func(v int64) int64 { r, _ := slowLookup(context.Background(), v); return r })
		})
	})
	cfg := weir.AsyncConfig[int64, int64]{Capacity: 100}
	b.Run("ordered-100", func(b *testing.B) {
		run(b, func(s weir.Stream[int64]) weir.Stream[int64] { return weir.AsyncOrdered(s, slowLookup, cfg) })
	})
	b.Run("unordered-100", func(b *testing.B) {
		run(b, func(s weir.Stream[int64]) weir.Stream[int64] { return weir.AsyncUnordered(s, slowLookup, cfg) })
	})
}
