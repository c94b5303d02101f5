package queries

import (
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q5Row is a row of q5, hot items: the auctions with the most bids in each
// 10-second window sliding by 2 seconds.
//
//	SELECT AuctionBids.auction, AuctionBids.num
//	FROM (SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
//	      FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
//	      GROUP BY auction, window_start, window_end) AS AuctionBids
//	JOIN (SELECT max(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
//	      FROM (SELECT count(*) AS num, window_start AS starttime, window_end AS endtime
//	            FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
//	            GROUP BY auction, window_start, window_end) AS CountBids
//	      GROUP BY CountBids.starttime, CountBids.endtime) AS MaxBids
//	ON AuctionBids.starttime = MaxBids.starttime AND AuctionBids.endtime = MaxBids.endtime
//	   AND AuctionBids.num >= MaxBids.maxn;
//
// Every auction tied for the most bids in a window gives a row. Windows are
// aligned to the epoch, as Flink's HOP. The result is append-only: a
// window's rows are written once, when the watermark passes its end.
type Q5Row struct {
	Auction int64 `json:"auction"`
	Num     int64 `json:"num"`
}

// q5Count is the number of bids on an auction in the window starting at
// Start.
type q5Count struct {
	Start, Auction, Num int64
}

// q5Hot is the most bids on one auction in a window so far and the
// auctions that have that many.
type q5Hot struct {
	Max      int64
	Auctions []int64
}

func init() {
	Register(Query{Name: "q5", Description: "hot items: the auctions with the most bids per 10 s window, sliding by 2 s", Build: func(in weir.Stream[nexmark.Event], out Output) {
		// Only the auction id crosses the exchange: the count needs no more.
		auctions := weir.Map(Bids(in), func(b nexmark.Bid) int64 { return b.Auction }, weir.Name("q5-auction"))
		counts := weir.AggregateWindow(
			weir.WindowBy(weir.KeyBy(auctions, func(a int64) int64 { return a }), weir.Sliding(Seconds(10), Seconds(2))),
			weir.Count[int64](), weir.Name("q5-count"))
		perWindow := weir.Map(counts, func(c weir.Windowed[int64, int64]) q5Count {
			return q5Count{c.Window.Start, c.Key, c.Value}
		}, weir.Name("q5-counts"))
		rows := weir.Process(weir.KeyBy(perWindow, func(c q5Count) int64 { return c.Start }),
			func() weir.KeyedProcessFunction[int64, q5Count, Q5Row] { return &q5Max{} },
			weir.Name("q5-max"))
		Emit(rows, out)
	}})
}

// q5Max collects a window's counts, keyed by window start, and when the
// watermark passes the window writes the auctions with the highest count.
// The counts of a window carry its last timestamp, so by the time the
// watermark reaches it they have all arrived.
type q5Max struct {
	hot *weir.ValueState[q5Hot, int64]
}

func (m *q5Max) Open(sc *weir.StateContext[int64]) error {
	m.hot = weir.NewValueState[q5Hot](sc, "hot")
	return nil
}

func (m *q5Max) ProcessElement(ctx *weir.KeyedContext[int64, Q5Row], c q5Count) error {
	h, ok := m.hot.Value()
	switch {
	case !ok || c.Num > h.Max:
		h = q5Hot{Max: c.Num, Auctions: []int64{c.Auction}}
	case c.Num == h.Max:
		h.Auctions = append(h.Auctions, c.Auction)
	default:
		return nil
	}
	m.hot.Update(h)
	ctx.RegisterEventTimer(ctx.Timestamp())
	return nil
}

func (m *q5Max) OnTimer(ctx *weir.KeyedContext[int64, Q5Row], _ int64, _ weir.TimeDomain) error {
	h, ok := m.hot.Value()
	if !ok {
		return nil
	}
	for _, a := range h.Auctions {
		ctx.Emit(Q5Row{a, h.Max})
	}
	m.hot.Clear()
	return nil
}
