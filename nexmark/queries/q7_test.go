package queries

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/nexmark"
)

// q7Reference is q7's SQL over bids, by brute force.
func q7Reference(bids []nexmark.Bid) []Q7Row {
	// B1: MAX(price) per tumbling window, with window_end.
	maxprice := map[int64]int64{} // by window_end
	for _, b := range bids {
		end := b.DateTime - b.DateTime%10000 + 10000
		if p, ok := maxprice[end]; !ok || b.Price > p {
			maxprice[end] = b.Price
		}
	}
	// The join: B.price = B1.maxprice AND B.dateTime BETWEEN end - 10 s AND end.
	var want []Q7Row
	for end, m := range maxprice {
		for _, b := range bids {
			if b.Price == m && b.DateTime >= end-10000 && b.DateTime <= end {
				want = append(want, Q7Row{b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra})
			}
		}
	}
	return want
}

func TestQ7(t *testing.T) {
	cfg := testConfig(100000)
	// 700 events/s: 143 s of events, and some bids fall on a window
	// boundary (at most rates the events there are all people).
	cfg.FirstEventRate, cfg.NextEventRate = 700, 700
	var bids []nexmark.Bid
	boundary := 0
	for _, e := range allEvents(t, cfg) {
		if e.Kind == nexmark.BidEvent {
			bids = append(bids, e.Bid)
			if e.Bid.DateTime%10000 == 0 {
				boundary++
			}
		}
	}
	want := q7Reference(bids)
	t.Logf("%d rows, %d bids at a window boundary", len(want), boundary)
	check(t, "q7", cfg, rowsJSON(t, want))
}

// TestQ7Boundary checks the inclusive BETWEEN with made-up bids: a bid at
// exactly a window's end with that window's highest price matches twice.
func TestQ7Boundary(t *testing.T) {
	bid := func(auction, price, ts int64) nexmark.Bid {
		return nexmark.Bid{Auction: auction, Bidder: 100 + auction, Price: price, DateTime: ts, Extra: "x"}
	}
	bids := []nexmark.Bid{
		bid(1, 5, 100), bid(1, 9, 200), bid(2, 9, 300), bid(3, 7, 9999), // window [0, 10 s): max 9
		bid(4, 9, 10000), bid(5, 3, 10000), bid(6, 2, 15000), // [10 s, 20 s): max 9, at its start
		bid(7, 9, 20000), bid(8, 8, 20000), // [20 s, 30 s): max 9, at the end of the one before
		bid(9, 1, 30000), bid(10, 4, 30000), bid(11, 4, 39999), // [30 s, 40 s): max 4
	}
	want := rowsJSON(t, q7Reference(bids))
	if len(want) != 8 {
		t.Fatalf("reference: %d rows, want 8: %v", len(want), want)
	}
	var events []nexmark.Event
	for _, b := range bids {
		events = append(events, nexmark.Event{Kind: nexmark.BidEvent, Bid: b})
	}
	for _, par := range []int{1, 4} {
		got := q7Run(t, events, par)
		if strings.Join(sortedCopy(got), "\n") != strings.Join(sortedCopy(want), "\n") {
			t.Fatalf("parallelism %d:\n got  %v\n want %v", par, sortedCopy(got), sortedCopy(want))
		}
	}
}

func sortedCopy(s []string) []string {
	s = append([]string(nil), s...)
	slices.Sort(s)
	return s
}

// q7Run runs q7 over the given events, each subtask's share in timestamp
// order.
func q7Run(t *testing.T, events []nexmark.Event, par int) []string {
	t.Helper()
	q, _ := Lookup("q7")
	dir := t.TempDir()
	p := weir.NewPipeline(weir.WithParallelism(par), weir.WithName("q7"))
	in := weir.FromSource(p, "events", collection.Of(events...), weir.WithTimestamps(func(e nexmark.Event) int64 { return e.DateTime() }, 0))
	q.Build(in, Output{Dir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return readRows(t, dir)
}
