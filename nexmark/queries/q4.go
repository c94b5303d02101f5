package queries

import (
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q4Row is a changelog row of q4, the average winning bid price per
// category:
//
//	SELECT Q.category, AVG(Q.final)
//	FROM (
//	    SELECT MAX(B.price) AS final, A.category
//	    FROM auction A, bid B
//	    WHERE A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires
//	    GROUP BY A.id, A.category
//	) Q
//	GROUP BY Q.category;
//
// The columns are named as the SQL's sink table (id, final): id is the
// category. AVG of a BIGINT is a BIGINT in Flink, the sum divided by the
// count with integer division; so is final here. The result updates: the
// rows are a changelog (op "+I" when a category first has a winning bid,
// then "-U"/"+U" pairs when its average changes).
//
// Deliberate difference: auction ids are taken to be unique, as the
// generator makes them; the per-auction state (the auction, its highest
// bid, bids that arrived before it) is dropped once the watermark passes
// the auction's expiry, so state stays bounded.
type Q4Row struct {
	Op    string `json:"op"`
	ID    int64  `json:"id"`
	Final int64  `json:"final"`
}

// q4Auction is the part of an auction q4 keeps.
type q4Auction struct {
	ID, Category, DateTime, Expires int64
}

// q4Bid is the part of a bid q4 keeps.
type q4Bid struct {
	Auction, Price, DateTime int64
}

// q4Max says that the highest bid price of an auction of Category rose
// from Old (if HadOld) to New.
type q4Max struct {
	Category, Old, New int64
	HadOld             bool
}

// q4Sum is a category's sum and number of auctions' highest bids.
type q4Sum struct {
	Sum, Count int64
}

// q4Input is an auction (IsAuction) or a bid for q4's per-auction join,
// keyed by auction id.
type q4Input struct {
	IsAuction bool
	Auction   q4Auction
	Bid       q4Bid
}

func init() {
	Register(Query{Name: "q4", Description: "average price for a category: mean of the auctions' winning bids per category (changelog)", Build: func(in weir.Stream[nexmark.Event], out Output) {
		// One projection of both sides, chained to the source, and one
		// exchange: two FlatMaps on the source would each be fed the
		// whole encoded event (the planner chains only linear paths).
		inputs := weir.FlatMap(in, func(e nexmark.Event, emit func(q4Input)) {
			switch e.Kind {
			case nexmark.AuctionEvent:
				a := e.Auction
				emit(q4Input{IsAuction: true, Auction: q4Auction{a.ID, a.Category, a.DateTime, a.Expires}})
			case nexmark.BidEvent:
				emit(q4Input{Bid: q4Bid{e.Bid.Auction, e.Bid.Price, e.Bid.DateTime}})
			}
		}, weir.Name("q4-auctions-bids"))
		maxes := weir.Process(
			weir.KeyBy(inputs, func(i q4Input) int64 {
				if i.IsAuction {
					return i.Auction.ID
				}
				return i.Bid.Auction
			}),
			func() weir.KeyedProcessFunction[int64, q4Input, q4Max] { return &q4Winning{} },
			weir.Name("q4-winning-bids"))
		rows := weir.Process(weir.KeyBy(maxes, func(m q4Max) int64 { return m.Category }),
			func() weir.KeyedProcessFunction[int64, q4Max, Q4Row] { return &q4Average{} },
			weir.Name("q4-average"))
		Emit(rows, out)
	}})
}

// q4Winning joins an auction with its bids in [dateTime, expires] and
// reports each rise of its highest price. It is keyed by auction id.
type q4Winning struct {
	auction *weir.ValueState[q4Auction, int64]
	max     *weir.ValueState[int64, int64]
	// waiting holds bids that arrived before their auction (about one
	// bid in seven at parallelism 2), with the time of their timer, in
	// one entry: a bid that waits costs one read and one write.
	waiting *weir.ValueState[q4Waiting, int64]
}

// q4Waiting are the bids of an auction that has not arrived. A bid at t
// can only match an auction with dateTime <= t, which has arrived once
// the watermark reaches t; a timer at Due, the earliest bid's time, then
// drops the bids it passed: one timer per key at a time, not one per bid.
// A stored value is never changed within its length: a bid is appended
// past it, and a change of the others stores a new slice or a tail of
// the stored one; so a snapshot shares it (weir.Immutable).
type q4Waiting struct {
	Due  int64
	Bids []q4Bid
}

func (q4Waiting) ImmutableInState() {}

func (w *q4Winning) Open(sc *weir.StateContext[int64]) error {
	w.auction = weir.NewValueState[q4Auction](sc, "auction")
	w.max = weir.NewValueState[int64](sc, "max")
	w.waiting = weir.NewValueState[q4Waiting](sc, "waiting")
	return nil
}

func (w *q4Winning) fold(ctx *weir.KeyedContext[int64, q4Max], a q4Auction, b q4Bid) {
	if b.DateTime < a.DateTime || b.DateTime > a.Expires {
		return
	}
	old, ok := w.max.Value()
	if ok && b.Price <= old {
		return
	}
	w.max.Update(b.Price)
	ctx.Emit(q4Max{Category: a.Category, Old: old, New: b.Price, HadOld: ok})
}

func (w *q4Winning) ProcessElement(ctx *weir.KeyedContext[int64, q4Max], in q4Input) error {
	if in.IsAuction {
		return w.auctionCame(ctx, in.Auction)
	}
	return w.bidCame(ctx, in.Bid)
}

func (w *q4Winning) auctionCame(ctx *weir.KeyedContext[int64, q4Max], a q4Auction) error {
	w.auction.Update(a)
	if waiting, ok := w.waiting.Value(); ok {
		for _, b := range waiting.Bids {
			w.fold(ctx, a, b)
		}
		w.waiting.Clear()
	}
	// Once the watermark passes expires, no bid that can match is to come.
	ctx.RegisterEventTimer(a.Expires)
	return nil
}

func (w *q4Winning) bidCame(ctx *weir.KeyedContext[int64, q4Max], b q4Bid) error {
	if a, ok := w.auction.Value(); ok {
		w.fold(ctx, a, b)
		return nil
	}
	waiting, ok := w.waiting.Value()
	// Appended past the stored slice's length, never within it: what a
	// snapshot holds of it does not change (see q4Waiting).
	next := q4Waiting{Due: waiting.Due, Bids: append(waiting.Bids, b)}
	if !ok || b.DateTime < waiting.Due {
		next.Due = b.DateTime
		ctx.RegisterEventTimer(b.DateTime)
	}
	w.waiting.Update(next)
	return nil
}

func (w *q4Winning) OnTimer(ctx *weir.KeyedContext[int64, q4Max], t int64, _ weir.TimeDomain) error {
	if a, ok := w.auction.Value(); ok {
		if t >= a.Expires {
			w.auction.Clear()
			w.max.Clear()
		}
		return nil
	}
	waiting, ok := w.waiting.Value()
	if !ok || t < waiting.Due {
		return nil // a timer made stale by an earlier bid's or by the auction
	}
	kept, first, next := 0, -1, int64(0)
	for i, b := range waiting.Bids {
		if b.DateTime > t {
			if kept == 0 || b.DateTime < next {
				next = b.DateTime
			}
			if first < 0 {
				first = i
			}
			kept++
		}
	}
	if kept == 0 {
		w.waiting.Clear()
		return nil
	}
	// The bids kept are most often those after the ones dropped: then
	// they are the stored slice's tail, not a copy.
	keep := waiting.Bids[first:]
	if kept < len(keep) {
		keep = make([]q4Bid, 0, kept)
		for _, b := range waiting.Bids {
			if b.DateTime > t {
				keep = append(keep, b)
			}
		}
	}
	w.waiting.Update(q4Waiting{Due: next, Bids: keep})
	ctx.RegisterEventTimer(next)
	return nil
}

// q4Average keeps a category's sum and count of winning bids and writes
// the changelog of their average. It is keyed by category.
type q4Average struct {
	sum *weir.ValueState[q4Sum, int64]
}

func (a *q4Average) Open(sc *weir.StateContext[int64]) error {
	a.sum = weir.NewValueState[q4Sum](sc, "sum")
	return nil
}

func (a *q4Average) ProcessElement(ctx *weir.KeyedContext[int64, Q4Row], m q4Max) error {
	s, _ := a.sum.Value()
	before := s
	if m.HadOld {
		s.Sum += m.New - m.Old
	} else {
		s.Sum += m.New
		s.Count++
	}
	a.sum.Update(s)
	cat := ctx.Key()
	switch {
	case before.Count == 0:
		ctx.Emit(Q4Row{Insert, cat, s.Sum / s.Count})
	case before.Sum/before.Count != s.Sum/s.Count:
		ctx.Emit(Q4Row{UpdateBefore, cat, before.Sum / before.Count})
		ctx.Emit(Q4Row{UpdateAfter, cat, s.Sum / s.Count})
	}
	return nil
}
