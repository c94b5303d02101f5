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

// q18Last is the state of a (bidder, auction) pair: its last bid without
// the key's columns. Its strings are the bid's own, shared, not copied:
// bids reach the operator as values from a subtask of the same process.
// The state holds a pointer to it, which a later bid overwrites in place
// (state that may change in place: a checkpoint encodes the pairs read
// since the one before while the subtask pauses for it), so that a bid on
// a pair it holds costs one lookup, not a lookup and a store.
type q18Last struct {
	Price, DateTime     int64
	Channel, URL, Extra string
}

func q18LastOf(b nexmark.Bid) q18Last {
	return q18Last{Price: b.Price, DateTime: b.DateTime, Channel: b.Channel, URL: b.URL, Extra: b.Extra}
}

func (l q18Last) row(op string, k Q18Key) Q18Row {
	return Q18Row{Op: op, Auction: k.Auction, Bidder: k.Bidder, Price: l.Price,
		Channel: l.Channel, URL: l.URL, DateTime: l.DateTime, Extra: l.Extra}
}

type q18Fn struct {
	last *weir.ValueState[*q18Last, Q18Key]
}

func (f *q18Fn) Open(sc *weir.StateContext[Q18Key]) error {
	f.last = weir.NewValueState[*q18Last](sc, "last")
	return nil
}

func (f *q18Fn) ProcessElement(ctx *weir.KeyedContext[Q18Key, Q18Row], b nexmark.Bid) error {
	old, ok := f.last.Value()
	switch {
	case !ok:
		ctx.Emit(q18RowOf(Insert, b))
	case b.DateTime >= old.DateTime:
		ctx.Emit(old.row(UpdateBefore, ctx.Key()))
		ctx.Emit(q18RowOf(UpdateAfter, b))
	default:
		return nil // an older bid than the one kept
	}
	if ok {
		*old = q18LastOf(b)
		return nil
	}
	l := q18LastOf(b)
	f.last.Update(&l)
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
