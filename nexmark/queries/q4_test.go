package queries

import (
	"context"
	"slices"
	"testing"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/generator"
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

// Bids that come before their auction wait for it; a bid whose auction
// never comes is dropped once the watermark passes it. At parallelism 1
// the events below arrive in this order, and the watermark passes them
// only at the end of the input.
func TestQ4BidsThatComeBeforeTheirAuctionWaitForIt(t *testing.T) {
	bid := func(auction, price, at int64) nexmark.Event {
		return nexmark.Event{Kind: nexmark.BidEvent, Bid: nexmark.Bid{Auction: auction, Bidder: 1, Price: price, DateTime: at}}
	}
	auction := func(id, category, at, expires int64) nexmark.Event {
		return nexmark.Event{Kind: nexmark.AuctionEvent, Auction: nexmark.Auction{ID: id, Category: category, DateTime: at, Expires: expires}}
	}
	events := []nexmark.Event{
		bid(7, 50, 200),          // waits, its timer at 200
		bid(7, 70, 300),          // waits
		bid(7, 40, 150),          // waits, and moves the timer to 150
		bid(8, 99, 160),          // auction 8 never comes: dropped at 160
		auction(7, 3, 100, 1000), // takes the three: highest 70
		bid(7, 60, 400),          // after the auction: lower, no change
		auction(9, 4, 500, 600),
		bid(9, 10, 700), // after auction 9 expired: no match
	}
	q, _ := Lookup("q4")
	dir := t.TempDir()
	p := weir.NewPipeline(weir.WithParallelism(1), weir.WithName("q4-waiting"))
	in := weir.FromSource(p, "events", generator.New(int64(len(events)), func(i int64) nexmark.Event { return events[i] }),
		weir.WithTimestamps(func(e nexmark.Event) int64 { return e.DateTime() }, 0))
	q.Build(in, Output{Dir: dir})
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := applyChangelog(t, readRows(t, dir))
	want := applyChangelog(t, rowsJSON(t, []Q4Row{{Op: Insert, ID: 3, Final: 70}}))
	if !slices.Equal(got, want) {
		t.Fatalf("final table %v, want %v", got, want)
	}
}
