package weir_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/generator"
)

// BenchmarkDeduplicate measures a whole job: generator -> hash exchange by
// id -> Deduplicate (horizon 10s) -> discard, parallelism 1 and 2, with
// and without the Bloom-filter fast path. The input is at-least-once
// deliveries: a quarter are copies of one of the 1000 records before, and
// 100 deliveries make a millisecond of event time, so about a million ids
// are remembered at a time. One op is one delivery; run with a large
// -benchtime (e.g. 10000000x) to reach that steady state.
func BenchmarkDeduplicate(b *testing.B) {
	for _, par := range []int{1, 2} {
		for _, filter := range []bool{true, false} {
			b.Run(fmt.Sprintf("p%d/filter=%v", par, filter), func(b *testing.B) {
				p := weir.NewPipeline(weir.WithParallelism(par))
				src := weir.FromSource(p, "deliveries", generator.New(int64(b.N), func(i int64) keyEvent {
					id := i
					if x := generator.Mix(5, uint64(i)); x%4 == 0 {
						id = max(0, i-1-int64(x>>8%1000))
					}
					return keyEvent{Key: id, Time: id / 100}
				}), weir.WithTimestamps(func(e keyEvent) int64 { return e.Time }, time.Second))
				stats := &weir.DedupStats{}
				opts := []weir.DedupOption{weir.DedupStatsTo(stats), weir.DedupExpectedIDs(1 << 20)}
				if !filter {
					opts = append(opts, weir.DedupWithoutFilter())
				}
				weir.To(weir.DeduplicateBy(src, func(e keyEvent) int64 { return e.Key }, 10*time.Second, opts...), "discard", discard[keyEvent]{})
				runBench(b, p)
				c := stats.Counts()
				b.ReportMetric(float64(c.ExactLookups)/float64(b.N), "exact-lookups/op")
				if filter {
					b.ReportMetric(c.FalsePositiveRate(), "fp-rate")
				}
			})
		}
	}
}
