package queries

import (
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

// q22Split is SPLIT_INDEX(s, "/", i) written out by hand: the text between
// the i-th and (i+1)-th '/' (0-based parts), or nil.
func q22Split(s string, i int) *string {
	start := 0
	for n := 0; n < i; n++ {
		k := start
		for k < len(s) && s[k] != '/' {
			k++
		}
		if k == len(s) {
			return nil // fewer than i separators
		}
		start = k + 1
	}
	end := start
	for end < len(s) && s[end] != '/' {
		end++
	}
	part := s[start:end]
	return &part
}

func TestQ22(t *testing.T) {
	cfg := testConfig(20000)
	var want []Q22Row
	for _, e := range allEvents(t, cfg) {
		if e.Kind != nexmark.BidEvent {
			continue
		}
		b := e.Bid
		r := Q22Row{b.Auction, b.Bidder, b.Price, b.Channel, q22Split(b.URL, 3), q22Split(b.URL, 4), q22Split(b.URL, 5)}
		if r.Dir3 == nil || *r.Dir1 == "" {
			t.Fatalf("url %q: no third directory", b.URL)
		}
		want = append(want, r)
	}
	if p := q22Split("a/b", 2); p != nil {
		t.Fatalf("q22Split past the end = %q", *p)
	}
	check(t, "q22", cfg, rowsJSON(t, want))
}
