package exec

import (
	"context"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/internal/sql/row"
)

// benchRows is n rows of (key BIGINT in [0, 1000), time TIMESTAMP(3)),
// a millisecond apart.
func benchRows(n int) []row.Row {
	rows := make([]row.Row, n)
	for i := range rows {
		rows[i] = row.New(row.BigInt(int64(i*7919%1000)), row.Timestamp(int64(i)))
	}
	return rows
}

// benchAgg runs build over 200,000 rows per iteration at parallelism 2
// and reports input rows per second.
func benchAgg(b *testing.B, build func(weir.Stream[row.Row]) weir.Stream[row.Row]) {
	rows := benchRows(200_000)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		p := weir.NewPipeline(weir.WithParallelism(2))
		in := weir.FromSource(p, "rows", collection.Of(rows...), weir.WithTimestamps(func(r row.Row) int64 { return r.V[1].I }, 0))
		weir.To(build(in), "out", collection.NewSink[row.Row]())
		if err := p.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(rows))/time.Since(start).Seconds(), "rows/s")
}

// COUNT(*) GROUP BY key over 1,000 keys: every row updates its key's
// count, emitting -U and +U.
func BenchmarkGroupAggregateCountPerKey(b *testing.B) {
	benchAgg(b, func(in weir.Stream[row.Row]) weir.Stream[row.Row] {
		return GroupAggregate(in, []int{0}, []AggSpec{{Fn: "COUNT", Arg: -1, Filter: -1}}, GroupOptions{AppendOnly: true})
	})
}

// COUNT(*) per key over TUMBLE(1 s) over 1,000 keys.
func BenchmarkWindowAggregateCountPerKey(b *testing.B) {
	benchAgg(b, func(in weir.Stream[row.Row]) weir.Stream[row.Row] {
		out, err := WindowAggregate(in, WindowSpec{Kind: Tumble, Size: time.Second, Time: 1, Keys: []int{0},
			Aggs: []AggSpec{{Fn: "COUNT", Arg: -1, Filter: -1}}})
		if err != nil {
			b.Fatal(err)
		}
		return out
	})
}
