package queries

import (
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q18Row is a changelog row of q18, the last bid of every bidder on every
// auction, the Nexmark SQL
//
//	SELECT auction, bidder, price, channel, url, dateTime, extra
//	FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction
//	                                   ORDER BY dateTime DESC) AS rank_number
//	      FROM bid)
//	WHERE rank_number <= 1;
//
// A (bidder, auction) pair's first bid inserts its row (op "+I"); a later
// bid with a dateTime at least as late replaces it ("-U" of the old row,
// "+U" of the new one). Bids with equal dateTime are kept in arrival order,
// the last one winning, as Flink's event-time deduplication does; arrival
// order per pair is the generator's order, so the result is deterministic.
type Q18Row struct {
	Op       string `json:"op"`
	Auction  int64  `json:"auction"`
	Bidder   int64  `json:"bidder"`
	Price    int64  `json:"price"`
	Channel  string `json:"channel"`
	URL      string `json:"url"`
	DateTime int64  `json:"dateTime"`
	Extra    string `json:"extra"`
}

// Q18Key is q18's partition: a bidder on an auction.
type Q18Key struct {
	Bidder  int64
	Auction int64
}

func q18RowOf(op string, b nexmark.Bid) Q18Row {
	return Q18Row{Op: op, Auction: b.Auction, Bidder: b.Bidder, Price: b.Price,
		Channel: b.Channel, URL: b.URL, DateTime: b.DateTime, Extra: b.Extra}
}

type q18Fn struct {
	last *weir.ValueState[nexmark.Bid, Q18Key]
}

func (f *q18Fn) Open(sc *weir.StateContext[Q18Key]) error {
	f.last = weir.NewValueState[nexmark.Bid](sc, "last")
	return nil
}

func (f *q18Fn) ProcessElement(ctx *weir.KeyedContext[Q18Key, Q18Row], b nexmark.Bid) error {
	old, ok := f.last.Value()
	switch {
	case !ok:
		ctx.Emit(q18RowOf(Insert, b))
	case b.DateTime >= old.DateTime:
		ctx.Emit(q18RowOf(UpdateBefore, old))
		ctx.Emit(q18RowOf(UpdateAfter, b))
	default:
		return nil // an older bid than the one kept
	}
	f.last.Update(b)
	return nil
}

func init() {
	Register(Query{Name: "q18", Description: "last bid of each bidder on each auction: deduplication keeping the latest row (changelog)",
		Build: func(in weir.Stream[nexmark.Event], out Output) {
			ks := weir.KeyBy(Bids(in), func(b nexmark.Bid) Q18Key { return Q18Key{b.Bidder, b.Auction} })
			Emit(weir.Process(ks, func() weir.KeyedProcessFunction[Q18Key, nexmark.Bid, Q18Row] { return &q18Fn{} },
				weir.Name("q18")), out)
		}})
}
