package queries

import (
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q15Row is the bidding statistics of a day, a changelog row. It implements
//
//	SELECT DATE_FORMAT(dateTime, 'yyyy-MM-dd') AS day,
//	  count(*) AS total_bids,
//	  count(*) FILTER (WHERE price < 10000) AS rank1_bids,
//	  count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
//	  count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
//	  count(DISTINCT bidder) AS total_bidders,
//	  count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders,
//	  ... (rank2_bidders, rank3_bidders likewise),
//	  count(DISTINCT auction) AS total_auctions,
//	  ... (rank1_auctions, rank2_auctions, rank3_auctions likewise)
//	FROM bid
//	GROUP BY DATE_FORMAT(dateTime, 'yyyy-MM-dd')
//
// As Flink's non-windowed aggregation, every bid updates its day's row: the
// first bid of a day inserts it (+I), each later one retracts the old row
// (-U) and inserts the new (+U). Days are UTC dates (Flink's TIMESTAMP of
// the event's instant).
type Q15Row struct {
	Op  string `json:"op"`
	Day string `json:"day"`
	q15Counts
}

// Q16Row is the bidding statistics of a channel on a day, a changelog row.
// It implements
//
//	SELECT channel, DATE_FORMAT(dateTime, 'yyyy-MM-dd') AS day,
//	  max(DATE_FORMAT(dateTime, 'HH:mm')) AS minute,
//	  ... the counts of q15 ...
//	FROM bid
//	GROUP BY channel, DATE_FORMAT(dateTime, 'yyyy-MM-dd')
//
// with changelog rows as Q15Row's; minute is the latest UTC hour:minute of
// the group's bids.
type Q16Row struct {
	Op      string `json:"op"`
	Channel string `json:"channel"`
	Day     string `json:"day"`
	Minute  string `json:"minute"`
	q15Counts
}

// q15Counts are the counts of q15 and q16, embedded in their rows (their
// JSON fields appear inline).
type q15Counts struct {
	TotalBids     int64 `json:"total_bids"`
	Rank1Bids     int64 `json:"rank1_bids"`
	Rank2Bids     int64 `json:"rank2_bids"`
	Rank3Bids     int64 `json:"rank3_bids"`
	TotalBidders  int64 `json:"total_bidders"`
	Rank1Bidders  int64 `json:"rank1_bidders"`
	Rank2Bidders  int64 `json:"rank2_bidders"`
	Rank3Bidders  int64 `json:"rank3_bidders"`
	TotalAuctions int64 `json:"total_auctions"`
	Rank1Auctions int64 `json:"rank1_auctions"`
	Rank2Auctions int64 `json:"rank2_auctions"`
	Rank3Auctions int64 `json:"rank3_auctions"`
}

// q15Stats is a group's state besides its distinct sets: the counts and,
// for q16, the latest minute.
type q15Stats struct {
	Counts q15Counts
	Minute string
}

// q15Rank is the price class of a bid: 1 below 10,000, 2 below 1,000,000,
// 3 from there.
func q15Rank(price int64) int {
	switch {
	case price < 10000:
		return 1
	case price < 1000000:
		return 2
	}
	return 3
}

// q15Add counts bid b into c. seenBidder and seenAuction are the masks of
// the classes the bid's bidder and auction were already counted in (bit 0:
// total, bit r: rank r); q15Add returns the new masks.
func q15Add(c *q15Counts, price int64, seenBidder, seenAuction uint8) (uint8, uint8) {
	r := q15Rank(price)
	rb := uint8(1) << r
	c.TotalBids++
	bids := [...]*int64{nil, &c.Rank1Bids, &c.Rank2Bids, &c.Rank3Bids}
	*bids[r]++
	bidders := [...]*int64{&c.TotalBidders, &c.Rank1Bidders, &c.Rank2Bidders, &c.Rank3Bidders}
	auctions := [...]*int64{&c.TotalAuctions, &c.Rank1Auctions, &c.Rank2Auctions, &c.Rank3Auctions}
	if seenBidder&1 == 0 {
		c.TotalBidders++
	}
	if seenBidder&rb == 0 {
		*bidders[r]++
	}
	if seenAuction&1 == 0 {
		c.TotalAuctions++
	}
	if seenAuction&rb == 0 {
		*auctions[r]++
	}
	return seenBidder | 1 | rb, seenAuction | 1 | rb
}

// q15Stat aggregates the bids of each key (a day, or a channel and day)
// and emits the changelog of the key's row.
type q15Stat[K comparable, R any] struct {
	row      func(op string, k K, s q15Stats) R
	stats    *weir.ValueState[q15Stats, K]
	bidders  *weir.MapState[int64, uint8, K]
	auctions *weir.MapState[int64, uint8, K]
}

func (q *q15Stat[K, R]) Open(sc *weir.StateContext[K]) error {
	q.stats = weir.NewValueState[q15Stats](sc, "stats")
	q.bidders = weir.NewMapState[int64, uint8](sc, "bidders")
	q.auctions = weir.NewMapState[int64, uint8](sc, "auctions")
	return nil
}

func (q *q15Stat[K, R]) ProcessElement(ctx *weir.KeyedContext[K, R], b nexmark.Bid) error {
	old, had := q.stats.Value()
	s := old
	sb, _ := q.bidders.Get(b.Bidder)
	sa, _ := q.auctions.Get(b.Auction)
	nb, na := q15Add(&s.Counts, b.Price, sb, sa)
	if nb != sb {
		q.bidders.Put(b.Bidder, nb)
	}
	if na != sa {
		q.auctions.Put(b.Auction, na)
	}
	if m := q15Minute(b.DateTime); m > s.Minute {
		s.Minute = m
	}
	q.stats.Update(s)
	if had {
		ctx.Emit(q.row(UpdateBefore, ctx.Key(), old))
		ctx.Emit(q.row(UpdateAfter, ctx.Key(), s))
	} else {
		ctx.Emit(q.row(Insert, ctx.Key(), s))
	}
	return nil
}

// q15Day is DATE_FORMAT(t, 'yyyy-MM-dd') in UTC.
func q15Day(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02") }

// q15Minute is DATE_FORMAT(t, 'HH:mm') in UTC.
func q15Minute(ms int64) string { return time.UnixMilli(ms).UTC().Format("15:04") }

// q16Key groups q16's bids.
type q16Key struct {
	Channel string
	Day     string
}

func init() {
	Register(Query{Name: "q15", Description: "bidding statistics per day: bids, distinct bidders and auctions by price class (changelog)", Build: func(in weir.Stream[nexmark.Event], out Output) {
		ks := weir.KeyBy(Bids(in), func(b nexmark.Bid) string { return q15Day(b.DateTime) })
		Emit(weir.Process(ks, func() weir.KeyedProcessFunction[string, nexmark.Bid, Q15Row] {
			return &q15Stat[string, Q15Row]{row: func(op string, day string, s q15Stats) Q15Row {
				return Q15Row{Op: op, Day: day, q15Counts: s.Counts}
			}}
		}, weir.Name("q15")), out)
	}})
	Register(Query{Name: "q16", Description: "bidding statistics per channel and day, with the latest minute (changelog)", Build: func(in weir.Stream[nexmark.Event], out Output) {
		ks := weir.KeyBy(Bids(in), func(b nexmark.Bid) q16Key { return q16Key{b.Channel, q15Day(b.DateTime)} })
		Emit(weir.Process(ks, func() weir.KeyedProcessFunction[q16Key, nexmark.Bid, Q16Row] {
			return &q15Stat[q16Key, Q16Row]{row: func(op string, k q16Key, s q15Stats) Q16Row {
				return Q16Row{Op: op, Channel: k.Channel, Day: k.Day, Minute: s.Minute, q15Counts: s.Counts}
			}}
		}, weir.Name("q16")), out)
	}})
}
