package queries

import (
	"slices"
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

// q11Reference groups each bidder's bid times into sessions: sorted, a bid
// at most 10 s after the session's last bid joins it.
func q11Reference(events []nexmark.Event) []Q11Row {
	const gap = 10_000
	times := map[int64][]int64{}
	for _, e := range events {
		if e.Kind == nexmark.BidEvent {
			times[e.Bid.Bidder] = append(times[e.Bid.Bidder], e.Bid.DateTime)
		}
	}
	var rows []Q11Row
	for bidder, ts := range times {
		slices.Sort(ts)
		start, last, n := ts[0], ts[0], int64(1)
		for _, t := range ts[1:] {
			if t-last > gap {
				rows = append(rows, Q11Row{bidder, n, start, last + gap})
				start, n = t, 0
			}
			last = t
			n++
		}
		rows = append(rows, Q11Row{bidder, n, start, last + gap})
	}
	return rows
}

func TestQ11(t *testing.T) {
	cfg := testConfig(40000)
	cfg.FirstEventRate, cfg.NextEventRate = 100, 100 // 400 s of event time: bidders have several sessions
	want := q11Reference(allEvents(t, cfg))
	sessions := map[int64]int{}
	for _, r := range want {
		sessions[r.Bidder]++
	}
	if len(sessions) == len(want) {
		t.Fatal("no bidder has two sessions: the test would prove little")
	}
	check(t, "q11", cfg, rowsJSON(t, want))
}
