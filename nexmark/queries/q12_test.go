package queries

import (
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

// q12Reference counts bids per bidder and 10 s event-time window.
func q12Reference(events []nexmark.Event) []Q12Row {
	const size = 10_000
	type key struct{ bidder, start int64 }
	counts := map[key]int64{}
	for _, e := range events {
		if e.Kind == nexmark.BidEvent {
			start := e.Bid.DateTime - e.Bid.DateTime%size // event times are positive
			counts[key{e.Bid.Bidder, start}]++
		}
	}
	var rows []Q12Row
	for k, n := range counts {
		rows = append(rows, Q12Row{k.bidder, n, k.start, k.start + size})
	}
	return rows
}

func TestQ12(t *testing.T) {
	cfg := testConfig(40000)
	cfg.FirstEventRate, cfg.NextEventRate = 500, 500 // 80 s of event time: 8 windows
	check(t, "q12", cfg, rowsJSON(t, q12Reference(allEvents(t, cfg))))
}
