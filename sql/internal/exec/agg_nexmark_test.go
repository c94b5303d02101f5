package exec

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
	"github.com/weir-stream/weir/nexmark"
	"github.com/weir-stream/weir/nexmark/queries"
)

// nexmarkConfig is the event stream of the Nexmark-shaped checks: n
// events from 4 generators, a thousand events a second of event time.
func nexmarkConfig(n int64) nexmark.Config {
	cfg := nexmark.DefaultConfig()
	cfg.NumEvents = n
	cfg.NumEventGenerators = 4
	cfg.FirstEventRate, cfg.NextEventRate = 1000, 1000
	return cfg
}

// runNexmark runs build over cfg's events at parallelism par, with
// failures injected under seed when seed is not 0, and returns the
// JSON lines build wrote to its directory and how many failures were
// injected.
func runNexmark(t *testing.T, cfg nexmark.Config, par int, seed uint64, build func(weir.Stream[nexmark.Event], string)) ([]string, int) {
	t.Helper()
	opts := []weir.Option{weir.WithParallelism(par)}
	if seed != 0 {
		opts = append(opts, weir.WithGuarantee(weir.ExactlyOnce),
			weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond}),
			weir.WithInjectedFailures(2, seed), weir.WithFailureWindow(60*time.Millisecond),
			weir.WithRestartStrategy("fixed-delay", 100, time.Millisecond, 0, 0))
	}
	p := weir.NewPipeline(opts...)
	in, err := queries.Events(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	build(in, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := file.ReadLines(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rows, p.Report().Injected
}

// runQuery runs the Go Nexmark query name over cfg's events.
func runQuery(t *testing.T, name string, cfg nexmark.Config) []string {
	q, _ := queries.Lookup(name)
	rows, _ := runNexmark(t, cfg, 2, 0, func(in weir.Stream[nexmark.Event], dir string) { q.Build(in, queries.Output{Dir: dir}) })
	return rows
}

// finalLines folds changelog lines into their final table.
func finalLines(t *testing.T, rows []string) []string {
	t.Helper()
	out, err := queries.ApplyChangelog(rows)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sorted(rows []string) []string {
	rows = slices.Clone(rows)
	slices.Sort(rows)
	return rows
}

func bidRows(in weir.Stream[nexmark.Event], of func(b nexmark.Bid) row.Row) weir.Stream[row.Row] {
	return weir.FlatMap(in, func(e nexmark.Event, emit func(row.Row)) {
		if e.Kind == nexmark.BidEvent {
			emit(of(e.Bid))
		}
	})
}

func day(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02") }

// priceRanks are q15-q17's filters on a price: < 10000, [10000,
// 1000000), >= 1000000.
func priceRanks(p int64) (row.Value, row.Value, row.Value) {
	return row.Bool(p < 10_000), row.Bool(p >= 10_000 && p < 1_000_000), row.Bool(p >= 1_000_000)
}

var bigint = types.BigIntType

// q17 as the planner would build it: bid columns auction, day, price
// and the three FILTER conditions, grouped by auction and day.
func buildQ17(in weir.Stream[nexmark.Event], dir string) {
	rows := bidRows(in, func(b nexmark.Bid) row.Row {
		r1, r2, r3 := priceRanks(b.Price)
		return row.New(row.BigInt(b.Auction), row.String(day(b.DateTime)), row.BigInt(b.Price), r1, r2, r3)
	})
	agg := GroupAggregate(rows, []int{0, 1}, []AggSpec{
		{Fn: "COUNT", Arg: -1, Filter: -1}, {Fn: "COUNT", Arg: -1, Filter: 3}, {Fn: "COUNT", Arg: -1, Filter: 4},
		{Fn: "COUNT", Arg: -1, Filter: 5}, {Fn: "MIN", Arg: 2, Filter: -1, In: bigint}, {Fn: "MAX", Arg: 2, Filter: -1, In: bigint},
		{Fn: "AVG", Arg: 2, Filter: -1, In: bigint}, {Fn: "SUM", Arg: 2, Filter: -1, In: bigint},
	}, GroupOptions{Name: "q17", AppendOnly: true})
	out := weir.Map(agg, func(r row.Row) queries.Q17Row {
		v := r.V
		return queries.Q17Row{Op: r.Op.String(), Auction: v[0].I, Day: v[1].S, TotalBids: v[2].I, Rank1Bids: v[3].I,
			Rank2Bids: v[4].I, Rank3Bids: v[5].I, MinPrice: v[6].I, MaxPrice: v[7].I, AvgPrice: v[8].I, SumPrice: v[9].I}
	})
	weir.To(out, "out", file.JSONSink[queries.Q17Row](dir))
}

// q11 as the planner would build it: GROUP BY bidder, SESSION(dateTime,
// INTERVAL '10' SECOND) with COUNT(*), SESSION_START and SESSION_END.
func buildQ11(in weir.Stream[nexmark.Event], dir string) {
	rows := bidRows(in, func(b nexmark.Bid) row.Row { return row.New(row.BigInt(b.Bidder), row.Timestamp(b.DateTime)) })
	agg, err := WindowAggregate(rows, WindowSpec{Kind: Session, Gap: 10 * time.Second, Time: 1, Keys: []int{0},
		Aggs: []AggSpec{{Fn: "COUNT", Arg: -1, Filter: -1}}, Name: "q11"})
	if err != nil {
		panic(err)
	}
	out := weir.Map(agg, func(r row.Row) queries.Q11Row {
		return queries.Q11Row{Bidder: r.V[0].I, StartTime: r.V[1].I, EndTime: r.V[2].I, BidCount: r.V[3].I}
	})
	weir.To(out, "out", file.JSONSink[queries.Q11Row](dir))
}

// GroupAggregate with q17's aggregates and FILTERs ends in the final
// table of the Go q17.
func TestGroupAggregateAsQ17MatchesTheGoQuery(t *testing.T) {
	cfg := nexmarkConfig(20_000)
	want := finalLines(t, runQuery(t, "q17", cfg))
	for _, par := range []int{1, 2} {
		got, _ := runNexmark(t, cfg, par, 0, buildQ17)
		sameLines(t, "q17", finalLines(t, got), want)
	}
}

// GroupAggregate with q15's COUNT(DISTINCT ...) FILTER aggregates ends
// in the final table of the Go q15.
func TestGroupAggregateAsQ15MatchesTheGoQuery(t *testing.T) {
	cfg := nexmarkConfig(20_000)
	want := finalLines(t, runQuery(t, "q15", cfg))
	build := func(in weir.Stream[nexmark.Event], dir string) {
		rows := bidRows(in, func(b nexmark.Bid) row.Row {
			r1, r2, r3 := priceRanks(b.Price)
			return row.New(row.String(day(b.DateTime)), row.BigInt(b.Bidder), row.BigInt(b.Auction), r1, r2, r3)
		})
		var aggs []AggSpec
		for _, c := range []struct {
			arg      int
			distinct bool
		}{{-1, false}, {1, true}, {2, true}} {
			for _, f := range []int{-1, 3, 4, 5} {
				aggs = append(aggs, AggSpec{Fn: "COUNT", Arg: c.arg, Distinct: c.distinct, Filter: f, In: bigint})
			}
		}
		agg := GroupAggregate(rows, []int{0}, aggs, GroupOptions{Name: "q15", AppendOnly: true})
		out := weir.Map(agg, func(r row.Row) queries.Q15Row {
			q := queries.Q15Row{Op: r.Op.String(), Day: r.V[0].S}
			for i, p := range []*int64{&q.TotalBids, &q.Rank1Bids, &q.Rank2Bids, &q.Rank3Bids, &q.TotalBidders,
				&q.Rank1Bidders, &q.Rank2Bidders, &q.Rank3Bidders, &q.TotalAuctions, &q.Rank1Auctions, &q.Rank2Auctions, &q.Rank3Auctions} {
				*p = r.V[1+i].I
			}
			return q
		})
		weir.To(out, "out", file.JSONSink[queries.Q15Row](dir))
	}
	got, _ := runNexmark(t, cfg, 2, 0, build)
	sameLines(t, "q15", finalLines(t, got), want)
}

// WindowAggregate over SESSION(10 s) per bidder gives the Go q11's rows.
func TestWindowAggregateAsQ11MatchesTheGoQuery(t *testing.T) {
	cfg := nexmarkConfig(20_000)
	want := sorted(runQuery(t, "q11", cfg))
	for _, par := range []int{1, 2} {
		got, _ := runNexmark(t, cfg, par, 0, buildQ11)
		sameLines(t, "q11", sorted(got), want)
	}
}

// q5's inner query, COUNT(*) per auction over HOP(2 s, 10 s), matches a
// brute-force count over the generated events.
func TestWindowAggregateAsQ5InnerCountMatchesBruteForce(t *testing.T) {
	cfg := nexmarkConfig(20_000)
	g, err := nexmark.NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[[3]int64]int64{}
	for _, sg := range g.Split(cfg.NumEventGenerators) {
		for i := range sg.MaxEvents() {
			var e nexmark.Event
			sg.EventAt(i, &e)
			if e.Kind != nexmark.BidEvent {
				continue
			}
			ts := e.Bid.DateTime
			for start := ts - ts%2000; start > ts-10_000; start -= 2000 {
				counts[[3]int64{e.Bid.Auction, start, start + 10_000}]++
			}
		}
	}
	var want []row.Row
	for k, n := range counts {
		want = append(want, row.New(row.BigInt(k[0]), row.Timestamp(k[1]), row.Timestamp(k[2]), row.BigInt(n)))
	}
	for _, par := range []int{1, 2} {
		p := weir.NewPipeline(weir.WithParallelism(par))
		in, err := queries.Events(p, cfg)
		if err != nil {
			t.Fatal(err)
		}
		rows := bidRows(in, func(b nexmark.Bid) row.Row { return row.New(row.BigInt(b.Auction), row.Timestamp(b.DateTime)) })
		agg, err := WindowAggregate(rows, WindowSpec{Kind: Hop, Size: 10 * time.Second, Step: 2 * time.Second, Time: 1,
			Keys: []int{0}, Aggs: []AggSpec{{Fn: "COUNT", Arg: -1, Filter: -1}}})
		if err != nil {
			t.Fatal(err)
		}
		sink := newRowSink()
		weir.To(agg, "out", sink)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err = p.Run(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		sameLines(t, "q5 counts", texts(sink.Records()), texts(want))
	}
}
