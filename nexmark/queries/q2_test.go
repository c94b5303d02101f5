package queries

import (
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

func TestQ2(t *testing.T) {
	cfg := testConfig(50000)
	var want []Q2Row
	for _, e := range allEvents(t, cfg) {
		if e.Kind == nexmark.BidEvent && e.Bid.Auction%123 == 0 {
			want = append(want, Q2Row{e.Bid.Auction, e.Bid.Price})
		}
	}
	t.Logf("%d rows", len(want))
	check(t, "q2", cfg, rowsJSON(t, want))
}
