package queries

import (
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q9Row is an auction with its winning bid, a changelog row. It implements
//
//	SELECT id, itemName, description, initialBid, reserve, dateTime, expires,
//	       seller, category, extra, auction, bidder, price, bid_dateTime, bid_extra
//	FROM (
//	  SELECT A.*, B.auction, B.bidder, B.price, B.dateTime AS bid_dateTime,
//	         B.extra AS bid_extra,
//	         ROW_NUMBER() OVER (PARTITION BY A.id
//	                            ORDER BY B.price DESC, B.dateTime ASC) AS rownum
//	  FROM auction A, bid B
//	  WHERE A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires)
//	WHERE rownum <= 1
//
// As Flink's top-1, the result updates: an auction's first valid bid is
// inserted (+I), and a better bid later retracts it (-U) and inserts
// itself (+U). Deliberate difference: bids equal in price and dateTime,
// which the SQL ranks in no defined order, are ranked by bidder, then
// extra (ascending), so that the result is deterministic.
//
// Bids that arrive before their auction wait for it; an auction's state is
// dropped once the watermark passes its expiry, and a waiting bid's once
// the watermark passes the bid without its auction having arrived (that
// auction, if any, is later than the bid, so the bid cannot win it).
type Q9Row struct {
	Op          string `json:"op"`
	ID          int64  `json:"id"`
	ItemName    string `json:"itemName"`
	Description string `json:"description"`
	InitialBid  int64  `json:"initialBid"`
	Reserve     int64  `json:"reserve"`
	DateTime    int64  `json:"dateTime"`
	Expires     int64  `json:"expires"`
	Seller      int64  `json:"seller"`
	Category    int64  `json:"category"`
	Extra       string `json:"extra"`
	Auction     int64  `json:"auction"`
	Bidder      int64  `json:"bidder"`
	Price       int64  `json:"price"`
	BidDateTime int64  `json:"bid_dateTime"`
	BidExtra    string `json:"bid_extra"`
}

func q9Row(op string, a nexmark.Auction, b nexmark.Bid) Q9Row {
	return Q9Row{Op: op, ID: a.ID, ItemName: a.ItemName, Description: a.Description, InitialBid: a.InitialBid,
		Reserve: a.Reserve, DateTime: a.DateTime, Expires: a.Expires, Seller: a.Seller, Category: a.Category,
		Extra: a.Extra, Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, BidDateTime: b.DateTime, BidExtra: b.Extra}
}

// q9Better reports whether bid x ranks before bid y: higher price, then
// earlier dateTime, then (ties the SQL leaves open) lower bidder, then
// smaller extra.
func q9Better(x, y nexmark.Bid) bool {
	switch {
	case x.Price != y.Price:
		return x.Price > y.Price
	case x.DateTime != y.DateTime:
		return x.DateTime < y.DateTime
	case x.Bidder != y.Bidder:
		return x.Bidder < y.Bidder
	}
	return x.Extra < y.Extra
}

// q9Winner keeps, per auction id, the auction, its best valid bid so far
// and the bids waiting for the auction.
type q9Winner struct {
	auction *weir.ValueState[nexmark.Auction, int64]
	best    *weir.ValueState[nexmark.Bid, int64]
	waiting *weir.ListState[nexmark.Bid, int64]
}

func (w *q9Winner) Open(sc *weir.StateContext[int64]) error {
	w.auction = weir.NewValueState[nexmark.Auction](sc, "auction")
	w.best = weir.NewValueState[nexmark.Bid](sc, "best")
	w.waiting = weir.NewListState[nexmark.Bid](sc, "waiting")
	return nil
}

func (w *q9Winner) ProcessElement1(ctx *weir.KeyedContext[int64, Q9Row], a nexmark.Auction) error {
	w.auction.Update(a)
	ctx.RegisterEventTimer(a.Expires) // no valid bid can come after
	waiting := w.waiting.Get()
	w.waiting.Clear()
	for _, b := range waiting {
		w.offer(ctx, a, b)
	}
	return nil
}

func (w *q9Winner) ProcessElement2(ctx *weir.KeyedContext[int64, Q9Row], b nexmark.Bid) error {
	if a, ok := w.auction.Value(); ok {
		w.offer(ctx, a, b)
		return nil
	}
	w.waiting.Add(b)
	ctx.RegisterEventTimer(b.DateTime)
	return nil
}

// offer ranks bid b for auction a, emitting the changelog if b wins.
func (w *q9Winner) offer(ctx *weir.KeyedContext[int64, Q9Row], a nexmark.Auction, b nexmark.Bid) {
	if b.DateTime < a.DateTime || b.DateTime > a.Expires {
		return
	}
	old, ok := w.best.Value()
	switch {
	case !ok:
		ctx.Emit(q9Row(Insert, a, b))
	case q9Better(b, old):
		ctx.Emit(q9Row(UpdateBefore, a, old))
		ctx.Emit(q9Row(UpdateAfter, a, b))
	default:
		return
	}
	w.best.Update(b)
}

func (w *q9Winner) OnTimer(ctx *weir.KeyedContext[int64, Q9Row], t int64, _ weir.TimeDomain) error {
	if a, ok := w.auction.Value(); ok {
		if t >= a.Expires { // every bid up to the expiry has arrived
			w.auction.Clear()
			w.best.Clear()
			w.waiting.Clear()
		}
		return nil
	}
	// Bids up to t whose auction has not arrived cannot win it.
	var keep []nexmark.Bid
	for _, b := range w.waiting.Get() {
		if b.DateTime > t {
			keep = append(keep, b)
		}
	}
	w.waiting.Update(keep)
	return nil
}

func init() {
	Register(Query{Name: "q9", Description: "winning bids: each auction's highest valid bid (changelog)", Build: func(in weir.Stream[nexmark.Event], out Output) {
		auctions := weir.FlatMap(in, func(e nexmark.Event, emit func(nexmark.Auction)) {
			if e.Kind == nexmark.AuctionEvent {
				emit(e.Auction)
			}
		}, weir.Name("q9-auctions"))
		Emit(weir.CoProcess(weir.KeyBy(auctions, func(a nexmark.Auction) int64 { return a.ID }),
			weir.KeyBy(Bids(in), func(b nexmark.Bid) int64 { return b.Auction }),
			func() weir.CoProcessFunction[int64, nexmark.Auction, nexmark.Bid, Q9Row] { return &q9Winner{} },
			weir.Name("q9")), out)
	}})
}
