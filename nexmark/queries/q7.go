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
// append-only: a window's rows are written once the watermark passes the
// end of the window after it, whose per-auction results bring the bids
// made at exactly the window's end.
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
// starting at Start: the bids of one auction at that auction's highest
// price in the window (Max), or, when Boundary, the auction's bids made at
// exactly the window's end, which match if their price equals the
// window's max.
type q7Window struct {
	Start    int64
	Max      int64
	Bids     []Q7Row
	Boundary bool
}

// q7Top is an auction's highest bid price in a window and its bids at that
// price, and its bids made at the window's first instant, which also
// belong to the window before (BETWEEN includes both ends).
type q7Top struct {
	Max     int64
	Bids    []Q7Row
	AtStart []Q7Row
}

type q7TopBids struct{}

func (q7TopBids) Create() q7Top { return q7Top{Max: -1} }

func (q7TopBids) Add(t q7Top, b Q7Row) q7Top {
	if b.DateTime%q7Size == 0 {
		t.AtStart = append(t.AtStart, b)
	}
	switch {
	case b.Price > t.Max:
		t.Max, t.Bids = b.Price, []Q7Row{b}
	case b.Price == t.Max:
		t.Bids = append(t.Bids, b)
	}
	return t
}

func (q7TopBids) Merge(a, b q7Top) q7Top {
	at := append(append([]Q7Row(nil), a.AtStart...), b.AtStart...)
	switch {
	case a.Max > b.Max:
		return q7Top{a.Max, a.Bids, at}
	case b.Max > a.Max:
		return q7Top{b.Max, b.Bids, at}
	}
	return q7Top{a.Max, append(append([]Q7Row(nil), a.Bids...), b.Bids...), at}
}

func (q7TopBids) Result(t q7Top) q7Top { return t }

const q7Size = 10000 // the window size in ms

func init() {
	Register(Query{Name: "q7", Description: "highest bid: the bids with the highest price of each 10 s window", Build: func(in weir.Stream[nexmark.Event], out Output) {
		bids := weir.FlatMap(in, func(e nexmark.Event, emit func(Q7Row)) {
			if e.Kind == nexmark.BidEvent {
				b := &e.Bid
				emit(Q7Row{b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra})
			}
		}, weir.Name("q7-bids"))
		// Combine per auction and window first, so that the per-window
		// stage, which sees all of a window, gets one record per auction
		// (the Flink plan's local and global MAX, keyed as a cluster
		// needs it: every subtask's state is its own and checkpointed).
		tops := weir.AggregateWindow(
			weir.WindowBy(weir.KeyBy(bids, func(r Q7Row) int64 { return r.Auction }), weir.Tumbling(Seconds(10))),
			weir.Aggregator[Q7Row, q7Top, q7Top](q7TopBids{}), weir.Name("q7-auction-max"))
		perWindow := weir.FlatMap(tops, func(w weir.Windowed[int64, q7Top], emit func(q7Window)) {
			emit(q7Window{Start: w.Window.Start, Max: w.Value.Max, Bids: w.Value.Bids})
			if len(w.Value.AtStart) > 0 {
				emit(q7Window{Start: w.Window.Start - q7Size, Boundary: true, Bids: w.Value.AtStart})
			}
		}, weir.Name("q7-auction-tops"))
		maxima := weir.Process(weir.KeyBy(perWindow, func(w q7Window) int64 { return w.Start }),
			func() weir.KeyedProcessFunction[int64, q7Window, Q7Row] { return &q7Max{} },
			weir.Name("q7-max"))
		Emit(maxima, out)
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

// q7Max, keyed by window start, finds the window's highest price and
// writes the bids at that price once the next window has closed too: the
// bids at the window's end come with the next window's per-auction
// results.
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
	ctx.RegisterEventTimer(ctx.Key() + 2*q7Size)
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

// Deterministic: q7Max uses event time only, and emits a window's rows in
// the order its records arrived.
func (m *q7Max) Deterministic() bool { return true }
