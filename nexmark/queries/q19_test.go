package queries

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/nexmark"
)

func TestQ19(t *testing.T) {
	cfg := testConfig(30000)
	// Bids per auction in stream order (generation order within a
	// generator), then a stable sort by price descending, earlier dateTime
	// first among equal prices.
	byAuction := map[int64][]nexmark.Bid{}
	for _, e := range allEvents(t, cfg) {
		if e.Kind == nexmark.BidEvent {
			byAuction[e.Bid.Auction] = append(byAuction[e.Bid.Auction], e.Bid)
		}
	}
	var want []Q19Row
	full := 0
	for _, bids := range byAuction {
		slices.SortStableFunc(bids, func(x, y nexmark.Bid) int {
			if x.Price != y.Price {
				if x.Price > y.Price {
					return -1
				}
				return 1
			}
			switch {
			case x.DateTime < y.DateTime:
				return -1
			case x.DateTime > y.DateTime:
				return 1
			}
			return 0
		})
		if len(bids) > 10 {
			bids = bids[:10]
			full++
		}
		for i, b := range bids {
			want = append(want, Q19Row{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel,
				URL: b.URL, DateTime: b.DateTime, Extra: b.Extra, RankNumber: int64(i + 1)})
		}
	}
	if full == 0 || full == len(byAuction) {
		t.Fatalf("%d of %d auctions have more than 10 bids; the test needs both kinds", full, len(byAuction))
	}
	checkChangelog(t, "q19", cfg, want)
}

// An auction's top list decodes to what was encoded, N entries of it, and
// every truncation of its encoding is an error wrapping codec.ErrCorrupt.
func TestQ19TopListsDecodeWhatTheyEncode(t *testing.T) {
	var top q19Top
	for i := range 3 {
		top = append(top, q19EntryOf(nexmark.Bid{Bidder: int64(i), Price: int64(100 - i), DateTime: int64(i * 7), Channel: "Apple", URL: "https://x/" + strings.Repeat("y", i), Extra: "e"}))
	}
	enc, err := top.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got q19Top
	n, err := got.DecodeBinary(enc)
	if err != nil || n != len(enc) || !slices.Equal(got, top) {
		t.Fatalf("decoded %+v (%d bytes, %v), want %+v (%d bytes)", got, n, err, top, len(enc))
	}
	for cut := range len(enc) {
		if _, err := got.DecodeBinary(enc[:cut]); !errors.Is(err, codec.ErrCorrupt) {
			t.Fatalf("decoding %d of %d bytes: got %v, want codec.ErrCorrupt", cut, len(enc), err)
		}
	}
}
