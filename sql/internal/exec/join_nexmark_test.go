package exec

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/nexmark"
	"github.com/weir-stream/weir/nexmark/queries"
)

// The Nexmark tables as rows, in the SQL's column order.
func bidRow(b nexmark.Bid) row.Row {
	return row.New(row.BigInt(b.Auction), row.BigInt(b.Bidder), row.BigInt(b.Price), row.String(b.Channel),
		row.String(b.URL), row.Timestamp(b.DateTime), row.String(b.Extra))
}

func auctionRow(a nexmark.Auction) row.Row {
	return row.New(row.BigInt(a.ID), row.String(a.ItemName), row.String(a.Description), row.BigInt(a.InitialBid),
		row.BigInt(a.Reserve), row.Timestamp(a.DateTime), row.Timestamp(a.Expires), row.BigInt(a.Seller),
		row.BigInt(a.Category), row.String(a.Extra))
}

func personRow(p nexmark.Person) row.Row {
	return row.New(row.BigInt(p.ID), row.String(p.Name), row.String(p.EmailAddress), row.String(p.CreditCard),
		row.String(p.City), row.String(p.State), row.Timestamp(p.DateTime), row.String(p.Extra))
}

// Column widths and indexes of the tables.
const (
	bidWidth, auctionWidth, personWidth = 7, 10, 8
)

// table selects one kind of event as rows, filtered by keep.
func rowsOf(in weir.Stream[nexmark.Event], kind nexmark.EventKind, keep func(row.Row) bool) weir.Stream[row.Row] {
	return weir.FlatMap(in, func(e nexmark.Event, emit func(row.Row)) {
		if e.Kind != kind {
			return
		}
		var r row.Row
		switch kind {
		case nexmark.BidEvent:
			r = bidRow(e.Bid)
		case nexmark.AuctionEvent:
			r = auctionRow(e.Auction)
		default:
			r = personRow(e.Person)
		}
		if keep == nil || keep(r) {
			emit(r)
		}
	})
}

// joinNexmarkConfig is the event stream of the Nexmark checks.
func joinNexmarkConfig() nexmark.Config {
	cfg := nexmark.DefaultConfig()
	cfg.NumEvents = 50000
	cfg.NumEventGenerators = 4
	return cfg
}

// joinRunNexmark runs build over the Nexmark events at parallelism par and
// returns the lines its file sink wrote, as a final table when the query
// writes a changelog.
func joinRunNexmark(t *testing.T, par int, build func(in weir.Stream[nexmark.Event], dir string)) []string {
	t.Helper()
	lines, _ := runNexmark(t, joinNexmarkConfig(), par, 0, build)
	var err error
	if queries.IsChangelog(lines) {
		if lines, err = queries.ApplyChangelog(lines); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(lines)
	return lines
}

// checkNexmark compares the final table of the operators build assembles,
// at parallelism 1 and 2, with that of the Go query name.
func checkNexmark[T any](t *testing.T, name string, build func(in weir.Stream[nexmark.Event]) weir.Stream[row.Row], conv func(row.Row) T) {
	t.Helper()
	q, ok := queries.Lookup(name)
	if !ok {
		t.Fatalf("no query %s", name)
	}
	want := joinRunNexmark(t, 2, func(in weir.Stream[nexmark.Event], dir string) { q.Build(in, queries.Output{Dir: dir}) })
	if len(want) == 0 {
		t.Fatalf("%s gave no rows; the check would prove nothing", name)
	}
	for _, par := range []int{1, 2} {
		got := joinRunNexmark(t, par, func(in weir.Stream[nexmark.Event], dir string) {
			weir.To(weir.Map(build(in), conv), "sink", file.JSONSink[T](dir))
		})
		diffFinalTables(t, name+" at parallelism "+strconv.Itoa(par), got, want)
	}
}

// q3: an inner regular join of filtered auctions and persons gives the Go
// query's rows.
func TestRegularJoinGivesNexmarkQ3(t *testing.T) {
	checkNexmark(t, "q3", func(in weir.Stream[nexmark.Event]) weir.Stream[row.Row] {
		auctions := rowsOf(in, nexmark.AuctionEvent, func(r row.Row) bool { return r.V[8].I == 10 })
		persons := rowsOf(in, nexmark.PersonEvent, func(r row.Row) bool {
			s := r.V[5].S
			return s == "OR" || s == "ID" || s == "CA"
		})
		return RegularJoin(auctions, persons, JoinSpec{Kind: InnerJoin, LeftKeys: []int{7}, RightKeys: []int{0},
			LeftWidth: auctionWidth, RightWidth: personWidth})
	}, func(r row.Row) queries.Q3Row {
		p := r.V[auctionWidth:]
		return queries.Q3Row{Name: p[1].S, City: p[4].S, State: p[5].S, ID: r.V[0].I}
	})
}

// q20: an inner regular join of bids and auctions of category 10 gives the
// Go query's rows.
func TestRegularJoinGivesNexmarkQ20(t *testing.T) {
	checkNexmark(t, "q20", func(in weir.Stream[nexmark.Event]) weir.Stream[row.Row] {
		bids := rowsOf(in, nexmark.BidEvent, nil)
		auctions := rowsOf(in, nexmark.AuctionEvent, func(r row.Row) bool { return r.V[8].I == 10 })
		return RegularJoin(bids, auctions, JoinSpec{Kind: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0},
			LeftWidth: bidWidth, RightWidth: auctionWidth})
	}, func(r row.Row) queries.Q20Row {
		b, a := r.V[:bidWidth], r.V[bidWidth:]
		return queries.Q20Row{Auction: b[0].I, Bidder: b[1].I, Price: b[2].I, Channel: b[3].S, URL: b[4].S,
			BidDateTime: b[5].I, BidExtra: b[6].S, ItemName: a[1].S, Description: a[2].S, InitialBid: a[3].I,
			Reserve: a[4].I, AuctionDateTime: a[5].I, Expires: a[6].I, Seller: a[7].I, Category: a[8].I,
			AuctionExtra: a[9].S}
	})
}

// q13: a lookup join of bids with a bounded table on auction mod 10000
// gives the Go query's rows.
func TestLookupJoinGivesNexmarkQ13(t *testing.T) {
	side := func() ([]row.Row, error) {
		rows := make([]row.Row, 10000)
		for i := range rows {
			rows[i] = row.New(row.BigInt(int64(i)), row.String(strconv.Itoa(i)))
		}
		return rows, nil
	}
	checkNexmark(t, "q13", func(in weir.Stream[nexmark.Event]) weir.Stream[row.Row] {
		// The planner projects the key expression into a column first.
		bids := weir.Map(rowsOf(in, nexmark.BidEvent, nil), func(r row.Row) row.Row {
			r.V = append(r.V[:bidWidth:bidWidth], row.BigInt(r.V[0].I%10000))
			return r
		})
		return LookupJoin(bids, side, JoinSpec{Kind: InnerJoin, LeftKeys: []int{bidWidth}, RightKeys: []int{0},
			LeftWidth: bidWidth + 1, RightWidth: 2})
	}, func(r row.Row) queries.Q13Row {
		return queries.Q13Row{Auction: r.V[0].I, Bidder: r.V[1].I, Price: r.V[2].I, DateTime: r.V[5].I, Value: r.V[bidWidth+2].S}
	})
}

// bidChangelogRow is a bid row of a changelog query, with its op.
func bidOp(r row.Row) string { return r.Op.String() }

// q18: deduplication keeping the last bid of each bidder on each auction
// (keyed by their values, as the planner keys it) gives the Go query's
// final table.
func TestDeduplicateGivesNexmarkQ18(t *testing.T) {
	checkNexmark(t, "q18", func(in weir.Stream[nexmark.Event]) weir.Stream[row.Row] {
		return Deduplicate(rowsOf(in, nexmark.BidEvent, nil), DedupSpec{Keys: []int{1, 0}, IntKeys: true, TimeCol: 5, KeepLast: true})
	}, func(r row.Row) queries.Q18Row {
		return queries.Q18Row{Op: bidOp(r), Auction: r.V[0].I, Bidder: r.V[1].I, Price: r.V[2].I, Channel: r.V[3].S,
			URL: r.V[4].S, DateTime: r.V[5].I, Extra: r.V[6].S}
	})
}

// q19: the top ten bids by price of each auction, with their row number,
// give the Go query's final table.
func TestRankGivesNexmarkQ19(t *testing.T) {
	checkNexmark(t, "q19", func(in weir.Stream[nexmark.Event]) weir.Stream[row.Row] {
		// Equal prices rank by earlier dateTime, as the Go query orders them.
		return Rank(rowsOf(in, nexmark.BidEvent, nil), RankSpec{PartitionKeys: []int{0},
			Order: []RankKey{{Col: 2, Desc: true, NullsLast: true}, {Col: 5}}, End: 10, WithRowNumber: true})
	}, func(r row.Row) queries.Q19Row {
		return queries.Q19Row{Op: bidOp(r), Auction: r.V[0].I, Bidder: r.V[1].I, Price: r.V[2].I, Channel: r.V[3].S,
			URL: r.V[4].S, DateTime: r.V[5].I, Extra: r.V[6].S, RankNumber: r.V[7].I}
	})
}

// tumble appends window_start and window_end of the ten-second tumbling
// window of the rowtime column tcol to the columns cols of each row, as
// the planner's window table function does.
func nexmarkTumble(s weir.Stream[row.Row], tcol int, cols ...int) weir.Stream[row.Row] {
	return weir.Map(s, func(r row.Row) row.Row {
		out := make([]row.Value, 0, len(cols)+2)
		for _, c := range cols {
			out = append(out, r.V[c])
		}
		ws := r.V[tcol].I - r.V[tcol].I%10000
		return row.New(append(out, row.Timestamp(ws), row.Timestamp(ws+10000))...)
	})
}

// q8: persons and sellers grouped per ten-second window (a window TopN
// keeping one row, as Flink plans a window deduplication) and window-joined
// give the Go query's rows.
func TestWindowJoinGivesNexmarkQ8(t *testing.T) {
	checkNexmark(t, "q8", func(in weir.Stream[nexmark.Event]) weir.Stream[row.Row] {
		persons := WindowRank(nexmarkTumble(rowsOf(in, nexmark.PersonEvent, nil), 6, 0, 1), // id, name, ws, we
			RankSpec{PartitionKeys: []int{0, 1}, End: 1, WindowStart: 2, WindowEnd: 3})
		sellers := WindowRank(nexmarkTumble(rowsOf(in, nexmark.AuctionEvent, nil), 5, 7), // seller, ws, we
			RankSpec{PartitionKeys: []int{0}, End: 1, WindowStart: 1, WindowEnd: 2})
		return WindowJoin(persons, sellers, JoinSpec{Kind: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0},
			LeftWidth: 4, RightWidth: 3, LeftWindow: [2]int{2, 3}, RightWindow: [2]int{1, 2}})
	}, func(r row.Row) queries.Q8Row {
		return queries.Q8Row{ID: r.V[0].I, Name: r.V[1].S, STime: r.V[2].I}
	})
}

// q7: each window's highest price (a window TopN keeping one row) joined
// by an interval join with the bids at that price made within the window
// (BETWEEN window_end - 10 s AND window_end) gives the Go query's rows.
func TestIntervalJoinGivesNexmarkQ7(t *testing.T) {
	checkNexmark(t, "q7", func(in weir.Stream[nexmark.Event]) weir.Stream[row.Row] {
		bids := rowsOf(in, nexmark.BidEvent, nil)
		// price, ws, we; emitted at window_end - 1.
		maxima := WindowRank(nexmarkTumble(bids, 5, 2), RankSpec{Order: []RankKey{{Col: 0, Desc: true}}, End: 1, WindowStart: 1, WindowEnd: 2})
		// B.dateTime BETWEEN we - 10 s AND we, with the maximum's rowtime
		// we - 1: its rowtime within [B.dateTime - 1 ms, B.dateTime + 9999 ms].
		return IntervalJoin(bids, maxima, JoinSpec{Kind: InnerJoin, LeftKeys: []int{2}, RightKeys: []int{0},
			LeftWidth: bidWidth, RightWidth: 3, Lower: -time.Millisecond, Upper: 9999 * time.Millisecond})
	}, func(r row.Row) queries.Q7Row {
		return queries.Q7Row{Auction: r.V[0].I, Bidder: r.V[1].I, Price: r.V[2].I, DateTime: r.V[5].I, Extra: r.V[6].S}
	})
}

// q9: a regular join of auctions and the bids within their lifetime,
// ranked top-1 per auction by price (then earlier time, bidder and extra,
// as the Go query breaks ties), gives the Go query's final table.
func TestJoinAndRankGiveNexmarkQ9(t *testing.T) {
	checkNexmark(t, "q9", func(in weir.Stream[nexmark.Event]) weir.Stream[row.Row] {
		auctions := rowsOf(in, nexmark.AuctionEvent, nil)
		bids := rowsOf(in, nexmark.BidEvent, nil)
		a, b := 0, auctionWidth // column offsets in the joined row
		joined := RegularJoin(auctions, bids, JoinSpec{Kind: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0},
			LeftWidth: auctionWidth, RightWidth: bidWidth, Cond: func(v []row.Value) (bool, error) {
				t := v[b+5].I
				return t >= v[a+5].I && t <= v[a+6].I, nil
			}})
		return Rank(joined, RankSpec{PartitionKeys: []int{0}, End: 1, Order: []RankKey{
			{Col: b + 2, Desc: true, NullsLast: true}, {Col: b + 5}, {Col: b + 1}, {Col: b + 6}}})
	}, func(r row.Row) queries.Q9Row {
		a, b := r.V[:auctionWidth], r.V[auctionWidth:]
		return queries.Q9Row{Op: bidOp(r), ID: a[0].I, ItemName: a[1].S, Description: a[2].S, InitialBid: a[3].I,
			Reserve: a[4].I, DateTime: a[5].I, Expires: a[6].I, Seller: a[7].I, Category: a[8].I, Extra: a[9].S,
			Auction: b[0].I, Bidder: b[1].I, Price: b[2].I, BidDateTime: b[5].I, BidExtra: b[6].S}
	})
}
