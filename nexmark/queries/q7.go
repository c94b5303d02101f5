package queries

import (
	"sync/atomic"

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
// starting at Start: either a bid in the window that may be its highest
// (Max is its price), or, when Boundary, a bid made at exactly the window's
// end, which matches if its price equals the window's max.
type q7Window struct {
	Start    int64
	Max      int64
	Bids     []Q7Row
	Boundary bool
}

const q7Size = 10000 // the window size in ms

func init() {
	Register(Query{Name: "q7", Description: "highest bid: the bids with the highest price of each 10 s window", Build: func(in weir.Stream[nexmark.Event], out Output) {
		// A local pre-filter, chained to the source, drops every bid
		// below a price already seen in its window: it cannot be the
		// window's maximum. Of a window's ~10^5 bids only the running
		// maxima (about ln n of them) and ties cross the exchange.
		f := newQ7Filter()
		candidates := weir.FlatMap(in, func(e nexmark.Event, emit func(q7Window)) {
			if e.Kind != nexmark.BidEvent {
				return
			}
			b := &e.Bid
			r := Q7Row{b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra}
			start := b.DateTime - b.DateTime%q7Size
			if f.keep(start, b.Price) {
				emit(q7Window{Start: start, Max: b.Price, Bids: []Q7Row{r}})
			}
			if b.DateTime%q7Size == 0 {
				emit(q7Window{Start: start - q7Size, Max: b.Price, Boundary: true, Bids: []Q7Row{r}})
			}
		}, weir.Name("q7-candidates"))
		rows := weir.Process(weir.KeyBy(candidates, func(w q7Window) int64 { return w.Start }),
			func() weir.KeyedProcessFunction[int64, q7Window, Q7Row] { return &q7Max{} },
			weir.Name("q7-max"))
		Emit(rows, out)
	}})
}

// q7Filter holds, per window, the highest bid price the pre-filter has
// passed, shared by the pipeline's source subtasks without locks: a ring
// of slots, each one word holding a window's number (low 24 bits) and the
// price (40 bits). It is an optimisation that is right whatever it
// remembers: a bid is dropped only below a price seen in the same window,
// and that bid reaches the window's maximum stage (again, if replayed after
// a restore, since an equal price passes), so the dropped one could never
// be the maximum. Losing or mixing up slots only lets more bids through.
type q7Filter struct {
	slots [64]atomic.Uint64
}

const (
	q7PriceBits = 40
	q7TagBits   = 64 - q7PriceBits
)

func newQ7Filter() *q7Filter { return &q7Filter{} }

// keep reports whether a bid of price in the window starting at start may
// be the window's maximum, recording price if it is the highest so far.
func (f *q7Filter) keep(start, price int64) bool {
	if price < 0 || price >= 1<<q7PriceBits {
		return true
	}
	w := start / q7Size
	tag := uint64(w) & (1<<q7TagBits - 1)
	slot := &f.slots[uint64(w)%uint64(len(f.slots))]
	for {
		old := slot.Load()
		oldTag, oldMax := old>>q7PriceBits, int64(old&(1<<q7PriceBits-1))
		if oldTag == tag {
			if price < oldMax {
				return false
			}
			if price == oldMax {
				return true
			}
		} else if int32(uint32(tag-oldTag)<<(32-q7TagBits)) < 0 && old != 0 {
			return true // the slot holds a later window: this subtask lags
		}
		if slot.CompareAndSwap(old, tag<<q7PriceBits|uint64(price)) {
			return true
		}
	}
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
