package queries

import (
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q17Row is a changelog row of q17, the per-auction, per-day bid statistics
// of the Nexmark SQL
//
//	SELECT auction, DATE_FORMAT(dateTime, 'yyyy-MM-dd') AS `day`,
//	       count(*) AS total_bids,
//	       count(*) FILTER (WHERE price < 10000) AS rank1_bids,
//	       count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
//	       count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
//	       min(price) AS min_price, max(price) AS max_price,
//	       avg(price) AS avg_price, sum(price) AS sum_price
//	FROM bid GROUP BY auction, DATE_FORMAT(dateTime, 'yyyy-MM-dd');
//
// The aggregation is unbounded, so the result updates with every bid: the
// first bid of a group inserts its row (op "+I"), every later one retracts
// the previous row ("-U") and inserts the new one ("+U"), as Flink's group
// aggregation does. day is the bid's UTC date; avg_price is BIGINT as in
// Flink, sum_price / total_bids truncated.
type Q17Row struct {
	Op        string `json:"op"`
	Auction   int64  `json:"auction"`
	Day       string `json:"day"`
	TotalBids int64  `json:"total_bids"`
	Rank1Bids int64  `json:"rank1_bids"`
	Rank2Bids int64  `json:"rank2_bids"`
	Rank3Bids int64  `json:"rank3_bids"`
	MinPrice  int64  `json:"min_price"`
	MaxPrice  int64  `json:"max_price"`
	AvgPrice  int64  `json:"avg_price"`
	SumPrice  int64  `json:"sum_price"`
}

// Q17Key is q17's group: an auction on a UTC day (days since the epoch).
type Q17Key struct {
	Auction int64
	Day     int64
}

// q17Bid is the part of a bid q17 needs: only it crosses the exchange.
type q17Bid struct {
	Auction, Price, DateTime int64
}

const msPerDay = 86_400_000

// q17DayOf is the UTC day of an epoch-millisecond time, in days since the
// epoch.
func q17DayOf(ms int64) int64 {
	d := ms / msPerDay
	if ms < 0 && ms%msPerDay != 0 {
		d--
	}
	return d
}

// q17Day formats an epoch-millisecond time as DATE_FORMAT(t, 'yyyy-MM-dd')
// in UTC.
func q17Day(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02") }

// q17Agg is a group's accumulator.
type q17Agg struct {
	Total, Rank1, Rank2, Rank3 int64
	Min, Max, Sum              int64
}

type q17Fn struct {
	agg *weir.ValueState[q17Agg, Q17Key]
	// day and dayText cache the last day's DATE_FORMAT: bids come in
	// time order, so nearly all share the last one.
	day     int64
	dayText string
}

func (f *q17Fn) Open(sc *weir.StateContext[Q17Key]) error {
	f.agg = weir.NewValueState[q17Agg](sc, "agg")
	return nil
}

func q17RowOf(op string, k Q17Key, day string, a q17Agg) Q17Row {
	return Q17Row{Op: op, Auction: k.Auction, Day: day, TotalBids: a.Total,
		Rank1Bids: a.Rank1, Rank2Bids: a.Rank2, Rank3Bids: a.Rank3,
		MinPrice: a.Min, MaxPrice: a.Max, AvgPrice: a.Sum / a.Total, SumPrice: a.Sum}
}

func (f *q17Fn) ProcessElement(ctx *weir.KeyedContext[Q17Key, Q17Row], b q17Bid) error {
	old, ok := f.agg.Value()
	a := old
	if !ok {
		a = q17Agg{Min: b.Price, Max: b.Price}
	}
	a.Total++
	switch {
	case b.Price < 10_000:
		a.Rank1++
	case b.Price < 1_000_000:
		a.Rank2++
	default:
		a.Rank3++
	}
	a.Min = min(a.Min, b.Price)
	a.Max = max(a.Max, b.Price)
	a.Sum += b.Price
	f.agg.Update(a)
	k := ctx.Key()
	if k.Day != f.day || f.dayText == "" {
		f.day, f.dayText = k.Day, q17Day(b.DateTime)
	}
	if ok {
		ctx.Emit(q17RowOf(UpdateBefore, k, f.dayText, old))
		ctx.Emit(q17RowOf(UpdateAfter, k, f.dayText, a))
	} else {
		ctx.Emit(q17RowOf(Insert, k, f.dayText, a))
	}
	return nil
}

func init() {
	Register(Query{Name: "q17", Description: "auction statistics: bids per auction and day, by price range, with min/max/avg/sum price (changelog)",
		Build: func(in weir.Stream[nexmark.Event], out Output) {
			// Only the columns the statistics need cross the exchange.
			bids := weir.FlatMap(in, func(e nexmark.Event, emit func(q17Bid)) {
				if e.Kind == nexmark.BidEvent {
					emit(q17Bid{e.Bid.Auction, e.Bid.Price, e.Bid.DateTime})
				}
			}, weir.Name("q17-bids"))
			ks := weir.KeyBy(bids, func(b q17Bid) Q17Key { return Q17Key{b.Auction, q17DayOf(b.DateTime)} })
			Emit(weir.Process(ks, func() weir.KeyedProcessFunction[Q17Key, q17Bid, Q17Row] { return &q17Fn{} },
				weir.Name("q17")), out)
		}})
}
