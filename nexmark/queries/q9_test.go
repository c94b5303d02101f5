package queries

import (
	"cmp"
	"slices"
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

// q9Reference joins every auction with its bids within [dateTime,
// expires] and keeps the first by price descending, dateTime ascending,
// then bidder and extra ascending.
func q9Reference(events []nexmark.Event) []Q9Row {
	auctions := map[int64]nexmark.Auction{}
	bids := map[int64][]nexmark.Bid{}
	for _, e := range events {
		switch e.Kind {
		case nexmark.AuctionEvent:
			auctions[e.Auction.ID] = e.Auction
		case nexmark.BidEvent:
			bids[e.Bid.Auction] = append(bids[e.Bid.Auction], e.Bid)
		}
	}
	var rows []Q9Row
	for id, a := range auctions {
		var valid []nexmark.Bid
		for _, b := range bids[id] {
			if a.DateTime <= b.DateTime && b.DateTime <= a.Expires {
				valid = append(valid, b)
			}
		}
		if len(valid) == 0 {
			continue
		}
		slices.SortFunc(valid, func(x, y nexmark.Bid) int {
			return cmp.Or(cmp.Compare(y.Price, x.Price), cmp.Compare(x.DateTime, y.DateTime),
				cmp.Compare(x.Bidder, y.Bidder), cmp.Compare(x.Extra, y.Extra))
		})
		b := valid[0]
		rows = append(rows, Q9Row{"", a.ID, a.ItemName, a.Description, a.InitialBid, a.Reserve, a.DateTime, a.Expires,
			a.Seller, a.Category, a.Extra, b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra})
	}
	return rows
}

func TestQ9(t *testing.T) {
	cfg := testConfig(50000)
	want := q9Reference(allEvents(t, cfg))
	checkChangelog(t, "q9", cfg, want)
}
