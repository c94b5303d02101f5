package queries

import (
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

// The references here and in the other *_test.go files are written from
// the Nexmark SQL, separately from the engine: plain loops over all events.

func bidRows(events []nexmark.Event, rate float64) []BidRow {
	var rows []BidRow
	for _, e := range events {
		if e.Kind == nexmark.BidEvent {
			price := float64(e.Bid.Price)
			if rate != 1 {
				price = rate * price
			}
			rows = append(rows, BidRow{e.Bid.Auction, e.Bid.Bidder, price, e.Bid.DateTime, e.Bid.Extra})
		}
	}
	return rows
}

func TestQ0(t *testing.T) {
	cfg := testConfig(20000)
	check(t, "q0", cfg, rowsJSON(t, bidRows(allEvents(t, cfg), 1)))
}

func TestQ1(t *testing.T) {
	cfg := testConfig(20000)
	check(t, "q1", cfg, rowsJSON(t, bidRows(allEvents(t, cfg), 0.908)))
}
