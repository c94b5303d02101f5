package loops

import (
	"iter"
	"time"

	"github.com/weir-stream/weir/nexmark"
	"github.com/weir-stream/weir/nexmark/queries"
)

func init() {
	register("q17", q17)
	register("q18", q18)
	register("q19", q19)
}

// q17 keeps per auction and UTC day the bid statistics and writes their
// changelog: an insert for a group's first bid, a retraction and an update
// for every later one.
func q17(events iter.Seq[*nexmark.Event], emit func(queries.Q17Row)) {
	type key struct{ auction, day int64 }
	type agg struct{ total, rank1, rank2, rank3, min, max, sum int64 }
	groups := map[key]*agg{}
	lastDay, lastDayStr := int64(-1<<63), ""
	row := func(op string, k key, day string, a *agg) queries.Q17Row {
		return queries.Q17Row{Op: op, Auction: k.auction, Day: day, TotalBids: a.total,
			Rank1Bids: a.rank1, Rank2Bids: a.rank2, Rank3Bids: a.rank3,
			MinPrice: a.min, MaxPrice: a.max, AvgPrice: a.sum / a.total, SumPrice: a.sum}
	}
	for e := range events {
		if e.Kind != nexmark.BidEvent {
			continue
		}
		b := &e.Bid
		day := b.DateTime / 86_400_000
		if b.DateTime < 0 && b.DateTime%86_400_000 != 0 {
			day--
		}
		if day != lastDay {
			lastDay, lastDayStr = day, time.UnixMilli(b.DateTime).UTC().Format("2006-01-02")
		}
		k := key{b.Auction, day}
		a := groups[k]
		if a == nil {
			a = &agg{min: b.Price, max: b.Price}
			groups[k] = a
		}
		old := *a
		a.total++
		switch {
		case b.Price < 10_000:
			a.rank1++
		case b.Price < 1_000_000:
			a.rank2++
		default:
			a.rank3++
		}
		a.min = min(a.min, b.Price)
		a.max = max(a.max, b.Price)
		a.sum += b.Price
		if old.total == 0 {
			emit(row(queries.Insert, k, lastDayStr, a))
		} else {
			emit(row(queries.UpdateBefore, k, lastDayStr, &old))
			emit(row(queries.UpdateAfter, k, lastDayStr, a))
		}
	}
}

// q18 keeps each bidder's last bid on each auction and writes the
// changelog of those rows.
func q18(events iter.Seq[*nexmark.Event], emit func(queries.Q18Row)) {
	type key struct{ bidder, auction int64 }
	last := map[key]nexmark.Bid{}
	row := func(op string, b *nexmark.Bid) queries.Q18Row {
		return queries.Q18Row{Op: op, Auction: b.Auction, Bidder: b.Bidder, Price: b.Price,
			Channel: b.Channel, URL: b.URL, DateTime: b.DateTime, Extra: b.Extra}
	}
	for e := range events {
		if e.Kind != nexmark.BidEvent {
			continue
		}
		b := &e.Bid
		k := key{b.Bidder, b.Auction}
		old, ok := last[k]
		switch {
		case !ok:
			emit(row(queries.Insert, b))
		case b.DateTime >= old.DateTime:
			emit(row(queries.UpdateBefore, &old))
			emit(row(queries.UpdateAfter, b))
		default:
			continue
		}
		last[k] = *b
	}
}

// q19 keeps each auction's ten highest bids (equal prices: earlier first)
// and writes the changelog of the ranked rows.
func q19(events iter.Seq[*nexmark.Event], emit func(queries.Q19Row)) {
	const topN = 10
	tops := map[int64][]nexmark.Bid{}
	row := func(op string, b *nexmark.Bid, rank int) queries.Q19Row {
		return queries.Q19Row{Op: op, Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel,
			URL: b.URL, DateTime: b.DateTime, Extra: b.Extra, RankNumber: int64(rank)}
	}
	for e := range events {
		if e.Kind != nexmark.BidEvent {
			continue
		}
		b := &e.Bid
		top := tops[b.Auction]
		pos := 0
		for pos < len(top) && (top[pos].Price > b.Price || top[pos].Price == b.Price && top[pos].DateTime <= b.DateTime) {
			pos++
		}
		if pos >= topN {
			continue
		}
		// Ranks pos and below move down by one; each change is written.
		n := len(top)
		if n < topN {
			top = append(top, nexmark.Bid{})
		}
		carry := *b
		for i := pos; i < len(top); i++ {
			if i < n {
				emit(row(queries.UpdateBefore, &top[i], i+1))
				top[i], carry = carry, top[i]
				emit(row(queries.UpdateAfter, &top[i], i+1))
			} else {
				top[i] = carry
				emit(row(queries.Insert, &top[i], i+1))
			}
		}
		tops[b.Auction] = top
	}
}
