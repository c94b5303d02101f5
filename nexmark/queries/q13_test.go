package queries

import (
	"fmt"
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

// q13Reference joins every bid with the side table's row for auction mod
// 10000, the table being key i -> "i" for i < 10000.
func q13Reference(events []nexmark.Event) []Q13Row {
	var rows []Q13Row
	for _, e := range events {
		if e.Kind != nexmark.BidEvent {
			continue
		}
		key := e.Bid.Auction % 10000
		if key < 0 || key >= 10000 {
			continue
		}
		rows = append(rows, Q13Row{e.Bid.Auction, e.Bid.Bidder, e.Bid.Price, e.Bid.DateTime, fmt.Sprint(key)})
	}
	return rows
}

func TestQ13(t *testing.T) {
	cfg := testConfig(20000)
	check(t, "q13", cfg, rowsJSON(t, q13Reference(allEvents(t, cfg))))
}
