package queries

import (
	"math/big"
	"strconv"
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

// q14Reference filters and converts bids with exact decimal arithmetic.
func q14Reference(t *testing.T, events []nexmark.Event) []Q14Row {
	rate := big.NewRat(908, 1000)
	lo, hi := big.NewRat(1000000, 1), big.NewRat(50000000, 1)
	var rows []Q14Row
	for _, e := range events {
		if e.Kind != nexmark.BidEvent {
			continue
		}
		b := e.Bid
		price := new(big.Rat).Mul(rate, new(big.Rat).SetInt64(b.Price))
		if price.Cmp(lo) <= 0 || price.Cmp(hi) >= 0 {
			continue
		}
		p, err := strconv.ParseFloat(price.FloatString(3), 64) // DECIMAL(23, 3)
		if err != nil {
			t.Fatal(err)
		}
		hour := (b.DateTime / 3_600_000) % 24 // UTC; event times are positive
		kind := "otherTime"
		if hour >= 8 && hour <= 18 {
			kind = "dayTime"
		} else if hour <= 6 || hour >= 20 {
			kind = "nightTime"
		}
		var c int64
		for i := 0; i < len(b.Extra); i++ {
			if b.Extra[i] == 'c' {
				c++
			}
		}
		rows = append(rows, Q14Row{b.Auction, b.Bidder, p, kind, b.DateTime, b.Extra, c})
	}
	return rows
}

func TestQ14(t *testing.T) {
	cfg := testConfig(40000)
	cfg.FirstEventRate, cfg.NextEventRate = 1, 1 // 40000 s of event time: 11 hours, day and night
	want := q14Reference(t, allEvents(t, cfg))
	kinds := map[string]bool{}
	for _, r := range want {
		kinds[r.BidTimeType] = true
	}
	if len(kinds) != 3 {
		t.Fatalf("reference has time types %v, want all three", kinds)
	}
	check(t, "q14", cfg, rowsJSON(t, want))
}
