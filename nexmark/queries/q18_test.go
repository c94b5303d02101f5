package queries

import (
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

func TestQ18(t *testing.T) {
	cfg := testConfig(50000)
	type pair struct{ bidder, auction int64 }
	last := map[pair]nexmark.Bid{}
	// Within a generator, events come in generation order, which is the
	// order the query sees a pair's bids in; among bids with the same
	// dateTime the later one wins.
	for _, e := range allEvents(t, cfg) {
		if e.Kind != nexmark.BidEvent {
			continue
		}
		k := pair{e.Bid.Bidder, e.Bid.Auction}
		if old, ok := last[k]; !ok || e.Bid.DateTime >= old.DateTime {
			last[k] = e.Bid
		}
	}
	var want []Q18Row
	for _, b := range last {
		want = append(want, Q18Row{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price,
			Channel: b.Channel, URL: b.URL, DateTime: b.DateTime, Extra: b.Extra})
	}
	checkChangelog(t, "q18", cfg, want)
}
