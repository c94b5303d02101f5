package queries

import (
	"slices"
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

// q4CheckFinal compares the final table of query name's changelog at
// parallelism 1 and 4 with want, the reference's final table as rows with
// op "+I".
func q4CheckFinal(t *testing.T, name string, cfg nexmark.Config, want []string) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: the reference produced no rows; the test would prove nothing", name)
	}
	table := applyChangelog(t, want)
	for _, par := range []int{1, 4} {
		got := applyChangelog(t, runQuery(t, name, cfg, par))
		if !slices.Equal(got, table) {
			t.Fatalf("%s at parallelism %d: final table\n%v\nreference\n%v", name, par, got, table)
		}
	}
}

func TestQ4(t *testing.T) {
	cfg := testConfig(100000)
	events := allEvents(t, cfg)
	type group struct {
		max int64
		set bool
	}
	// The inner query: MAX(B.price) per (A.id, A.category) over the join.
	bidsOf := map[int64][]nexmark.Bid{} // A.id = B.auction, by index
	for _, e := range events {
		if e.Kind == nexmark.BidEvent {
			bidsOf[e.Bid.Auction] = append(bidsOf[e.Bid.Auction], e.Bid)
		}
	}
	winning := map[[2]int64]*group{}
	for _, ae := range events {
		if ae.Kind != nexmark.AuctionEvent {
			continue
		}
		a := ae.Auction
		for _, b := range bidsOf[a.ID] {
			if b.DateTime >= a.DateTime && b.DateTime <= a.Expires {
				k := [2]int64{a.ID, a.Category}
				g := winning[k]
				if g == nil {
					g = &group{}
					winning[k] = g
				}
				if !g.set || b.Price > g.max {
					g.max, g.set = b.Price, true
				}
			}
		}
	}
	// The outer query: AVG(final) per category, BIGINT division.
	sum, count := map[int64]int64{}, map[int64]int64{}
	for k, g := range winning {
		sum[k[1]] += g.max
		count[k[1]]++
	}
	var want []Q4Row
	for c := range sum {
		want = append(want, Q4Row{Insert, c, sum[c] / count[c]})
	}
	t.Logf("%d auctions with a winning bid: %v", len(winning), want)
	q4CheckFinal(t, "q4", cfg, rowsJSON(t, want))
}
