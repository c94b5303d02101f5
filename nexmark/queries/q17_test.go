package queries

import (
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

func TestQ17(t *testing.T) {
	cfg := testConfig(50000)
	// 50,000 events take 5 s of event time; start 2.5 s before midnight
	// so that groups split across two days.
	cfg.BaseTime = nexmark.DefaultBaseTime - 2500
	type group struct {
		auction int64
		day     string
	}
	rows := map[group]*Q17Row{}
	for _, e := range allEvents(t, cfg) {
		if e.Kind != nexmark.BidEvent {
			continue
		}
		b := e.Bid
		g := group{b.Auction, q17Day(b.DateTime)}
		r := rows[g]
		if r == nil {
			r = &Q17Row{Auction: g.auction, Day: g.day, MinPrice: b.Price, MaxPrice: b.Price}
			rows[g] = r
		}
		r.TotalBids++
		if b.Price < 10000 {
			r.Rank1Bids++
		}
		if b.Price >= 10000 && b.Price < 1000000 {
			r.Rank2Bids++
		}
		if b.Price >= 1000000 {
			r.Rank3Bids++
		}
		if b.Price < r.MinPrice {
			r.MinPrice = b.Price
		}
		if b.Price > r.MaxPrice {
			r.MaxPrice = b.Price
		}
		r.SumPrice += b.Price
	}
	var want []Q17Row
	days := map[string]bool{}
	for _, r := range rows {
		days[r.Day] = true
		r.AvgPrice = r.SumPrice / r.TotalBids
		want = append(want, *r)
	}
	if len(days) != 2 {
		t.Fatalf("reference spans days %v, want two", days)
	}
	checkChangelog(t, "q17", cfg, want)
}
