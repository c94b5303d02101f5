package queries

import (
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q7Row is a row of q7, highest bid: the bids whose price is the highest
// of a 10-second tumbling window.
//
//	SELECT B.auction, B.price, B.bidder, B.dateTime, B.extra
//	FROM bid B
//	JOIN (SELECT MAX(price) AS maxprice, window_end AS dateTime
//	      FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
//	      GROUP BY window_start, window_end) B1
//	ON B.price = B1.maxprice
//	WHERE B.dateTime BETWEEN B1.dateTime - INTERVAL '10' SECOND AND B1.dateTime;
//
// As in the SQL, BETWEEN includes both ends: a bid at exactly a window's
// end (the first instant of the next window) also matches that window's
// maximum, and then can appear twice, once per window. The result is
// append-only: a window's rows are written once the watermark passes its
// end.
//
// Deliberate difference: the SQL's sink table lists the columns as
// (auction, bidder, price, dateTime, extra) but the SELECT gives them as
// (auction, price, bidder, ...), so Flink's INSERT, which matches by
// position, writes the price into bidder and the bidder into price. Here
// each value goes to the column its name says.
type Q7Row struct {
	Auction  int64  `json:"auction"`
	Bidder   int64  `json:"bidder"`
	Price    int64  `json:"price"`
	DateTime int64  `json:"dateTime"`
	Extra    string `json:"extra"`
}

// q7Window is what the per-window stage receives for the tumbling window
// starting at Start: either the highest-priced bids of one auction in the
// window (Max is their price), or, when Boundary, one bid made at exactly
// the window's end, which matches if its price equals the window's max.
type q7Window struct {
	Start    int64
	Max      int64
	Bids     []Q7Row
	Boundary bool
}

// q7Top is an auction's highest bid price in a window and its bids at that
// price.
type q7Top struct {
	Max  int64
	Bids []Q7Row
}

type q7TopBids struct{}

func (q7TopBids) Create() q7Top { return q7Top{Max: -1} }

func (q7TopBids) Add(t q7Top, b nexmark.Bid) q7Top {
	r := Q7Row{b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra}
	switch {
	case b.Price > t.Max:
		return q7Top{Max: b.Price, Bids: []Q7Row{r}}
	case b.Price == t.Max:
		t.Bids = append(t.Bids, r)
	}
	return t
}

func (q7TopBids) Merge(a, b q7Top) q7Top {
	switch {
	case a.Max > b.Max:
		return a
	case b.Max > a.Max:
		return b
	}
	return q7Top{Max: a.Max, Bids: append(append([]Q7Row(nil), a.Bids...), b.Bids...)}
}

func (q7TopBids) Result(t q7Top) q7Top { return t }

const q7Size = 10000 // the window size in ms

func init() {
	Register(Query{Name: "q7", Description: "highest bid: the bids with the highest price of each 10 s window", Build: func(in weir.Stream[nexmark.Event], out Output) {
		bids := Bids(in)
		// Combine per auction first, so that the per-window stage, which
		// sees all of a window, gets one record per auction.
		tops := weir.AggregateWindow(
			weir.WindowBy(weir.KeyBy(bids, func(b nexmark.Bid) int64 { return b.Auction }), weir.Tumbling(Seconds(10))),
			weir.Aggregator[nexmark.Bid, q7Top, q7Top](q7TopBids{}), weir.Name("q7-auction-max"))
		perAuction := weir.Map(tops, func(w weir.Windowed[int64, q7Top]) q7Window {
			return q7Window{Start: w.Window.Start, Max: w.Value.Max, Bids: w.Value.Bids}
		}, weir.Name("q7-auction-tops"))
		boundary := weir.FlatMap(bids, func(b nexmark.Bid, emit func(q7Window)) {
			if b.DateTime%q7Size == 0 {
				emit(q7Window{Start: b.DateTime - q7Size, Max: b.Price, Boundary: true,
					Bids: []Q7Row{{b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra}}})
			}
		}, weir.Name("q7-boundary-bids"))
		rows := weir.Process(weir.KeyBy(weir.Union(perAuction, boundary), func(w q7Window) int64 { return w.Start }),
			func() weir.KeyedProcessFunction[int64, q7Window, Q7Row] { return &q7Max{} },
			weir.Name("q7-max"))
		Emit(rows, out)
	}})
}

// q7Pending is a window's state in q7Max: the highest price so far (if
// Set), the bids in the window at that price, and the bids at the window's
// end.
type q7Pending struct {
	Set      bool
	Max      int64
	Bids     []Q7Row
	Boundary []Q7Row
}

// q7Max, keyed by window start, finds the window's highest price and, once
// the watermark passes the window's end (inclusive, for the boundary
// bids), writes the bids at that price.
type q7Max struct {
	w *weir.ValueState[q7Pending, int64]
}

func (m *q7Max) Open(sc *weir.StateContext[int64]) error {
	m.w = weir.NewValueState[q7Pending](sc, "window")
	return nil
}

func (m *q7Max) ProcessElement(ctx *weir.KeyedContext[int64, Q7Row], in q7Window) error {
	p, _ := m.w.Value()
	switch {
	case in.Boundary:
		p.Boundary = append(p.Boundary, in.Bids...)
	case !p.Set || in.Max > p.Max:
		p.Set, p.Max, p.Bids = true, in.Max, in.Bids
	case in.Max == p.Max:
		p.Bids = append(p.Bids, in.Bids...)
	}
	m.w.Update(p)
	ctx.RegisterEventTimer(ctx.Key() + q7Size)
	return nil
}

func (m *q7Max) OnTimer(ctx *weir.KeyedContext[int64, Q7Row], _ int64, _ weir.TimeDomain) error {
	p, ok := m.w.Value()
	m.w.Clear()
	if !ok || !p.Set {
		return nil // no bid in the window: no maximum to match
	}
	for _, b := range p.Bids {
		ctx.Emit(b)
	}
	for _, b := range p.Boundary {
		if b.Price == p.Max {
			ctx.Emit(b)
		}
	}
	return nil
}
