package queries

import (
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

func TestQ20(t *testing.T) {
	cfg := testConfig(50000)
	events := allEvents(t, cfg)
	auctions := map[int64]nexmark.Auction{}
	for _, e := range events {
		if e.Kind == nexmark.AuctionEvent {
			if _, dup := auctions[e.Auction.ID]; dup {
				t.Fatalf("auction id %d twice", e.Auction.ID)
			}
			auctions[e.Auction.ID] = e.Auction
		}
	}
	var want []Q20Row
	for _, e := range events {
		if e.Kind != nexmark.BidEvent {
			continue
		}
		b := e.Bid
		a, ok := auctions[b.Auction]
		if !ok || a.Category != 10 {
			continue
		}
		want = append(want, Q20Row{
			Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel, URL: b.URL,
			BidDateTime: b.DateTime, BidExtra: b.Extra,
			ItemName: a.ItemName, Description: a.Description, InitialBid: a.InitialBid, Reserve: a.Reserve,
			AuctionDateTime: a.DateTime, Expires: a.Expires, Seller: a.Seller, Category: a.Category,
			AuctionExtra: a.Extra,
		})
	}
	checkQ20Early(t, events, auctions)
	check(t, "q20", cfg, rowsJSON(t, want))
}

// checkQ20Early makes sure some category-10 bids precede their auction in
// event time, so the test covers bids waiting for their auction.
func checkQ20Early(t *testing.T, events []nexmark.Event, auctions map[int64]nexmark.Auction) {
	t.Helper()
	for _, e := range events {
		if e.Kind == nexmark.BidEvent {
			if a, ok := auctions[e.Bid.Auction]; ok && a.Category == 10 && e.Bid.DateTime < a.DateTime {
				return
			}
		}
	}
	t.Fatal("no category-10 bid precedes its auction")
}
