package dedup

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/weir-stream/weir/connectors/generator"
)

// benchDelivery is delivery i of the benchmarks' at-least-once input: a
// quarter are copies of one of the 1000 records before, the rest new ids;
// 100 deliveries per millisecond of event time.
func benchDelivery(i int64) (ts int64, r dupRec) {
	id := i
	if x := generator.Mix(5, uint64(i)); x%4 == 0 {
		id = max(0, i-1-int64(x>>8%1000))
	}
	return id / 100, dupRec{ID: id, N: i}
}

// BenchmarkDedupOperator measures one Deduplicate subtask alone, records
// handed to it directly (no source, no exchange), with a watermark every
// 1024 records. The horizon of 10s holds about a million ids; the operator
// is warmed up with 3M records first, so it runs at steady state: every
// lookup meets several live generations, and expiry drops old ones.
func BenchmarkDedupOperator(b *testing.B) {
	for _, filter := range []bool{true, false} {
		b.Run(fmt.Sprintf("filter=%v", filter), func(b *testing.B) {
			stats := &Stats{}
			d := newTestDedup(b, dedupOpts{horizon: int64(10 * time.Second / time.Millisecond), filter: filter,
				expected: 1 << 20, fpRate: 0.01, stats: stats})
			const warm = 3_000_000
			feed := func(from, to int64) {
				for i := from; i < to; i++ {
					ts, r := benchDelivery(i)
					d.op.Collect(ts, r)
					if i%1024 == 1023 {
						d.op.Watermark(i/100 - 1000) // a second of out-of-orderness
					}
				}
			}
			feed(0, warm)
			d.out.recs = nil
			before := stats.Counts()
			cpu0 := processCPU()
			b.ResetTimer()
			// Collected output grows; keep it from growing without bound.
			for done := int64(0); done < int64(b.N); {
				n := min(int64(b.N)-done, 1<<20)
				feed(warm+done, warm+done+n)
				d.out.recs = d.out.recs[:0]
				done += n
			}
			b.StopTimer()
			// CPU time of the process (with the garbage collector's), less
			// disturbed than wall time by other work on a shared machine.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			d.op.publish()
			c := stats.Counts()
			b.ReportMetric(float64(c.ExactLookups-before.ExactLookups)/float64(b.N), "exact-lookups/op")
			b.ReportMetric(float64(c.IDs), "ids-held")
			if filter {
				fp := float64(c.FalsePositives-before.FalsePositives) / float64(c.FalsePositives-before.FalsePositives+c.FilterNegatives-before.FilterNegatives)
				b.ReportMetric(fp, "fp-rate")
				b.ReportMetric(float64(c.FilterBits)/8/(1<<20), "filter-MiB")
			}
		})
	}
}

// processCPU returns the process's user and system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
