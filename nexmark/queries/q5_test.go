package queries

import (
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

func TestQ5(t *testing.T) {
	cfg := testConfig(50000)
	cfg.FirstEventRate, cfg.NextEventRate = 1000, 1000 // 50 s of events
	const size, slide = 10000, 2000
	// count(*) per (auction, window_start) over HOP windows.
	num := map[[2]int64]int64{}
	for _, e := range allEvents(t, cfg) {
		if e.Kind != nexmark.BidEvent {
			continue
		}
		ts := e.Bid.DateTime
		for start := ts - ts%slide; start > ts-size; start -= slide {
			num[[2]int64{e.Bid.Auction, start}]++
		}
	}
	// max(num) per window_start.
	maxn := map[int64]int64{}
	for k, n := range num {
		maxn[k[1]] = max(maxn[k[1]], n)
	}
	var want []Q5Row
	for k, n := range num {
		if n >= maxn[k[1]] {
			want = append(want, Q5Row{k[0], n})
		}
	}
	t.Logf("%d windows, %d rows", len(maxn), len(want))
	check(t, "q5", cfg, rowsJSON(t, want))
}
