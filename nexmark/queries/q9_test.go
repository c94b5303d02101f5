package queries

import (
	"cmp"
	"encoding/json"
	"slices"
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

// checkChangelogQ9Q15Q16 runs the changelog query name at parallelism 1
// and 4 and compares the table its rows fold into (applyChangelog) with
// want, the reference's final rows (their op fields are ignored), in
// applyChangelog's canonical encoding.
func checkChangelogQ9Q15Q16[T any](t *testing.T, name string, cfg nexmark.Config, want []T) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: the reference produced no rows; the test would prove nothing", name)
	}
	var canon []string
	for _, r := range rowsJSON(t, want) {
		var m map[string]any
		if err := json.Unmarshal([]byte(r), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "op")
		b, _ := json.Marshal(m)
		canon = append(canon, string(b))
	}
	slices.Sort(canon)
	for _, par := range []int{1, 4} {
		got := applyChangelog(t, runQuery(t, name, cfg, par))
		if !slices.Equal(got, canon) {
			diff := ""
			for i := range min(len(got), len(canon)) {
				if got[i] != canon[i] {
					diff = "first difference:\n got  " + got[i] + "\n want " + canon[i]
					break
				}
			}
			t.Fatalf("%s at parallelism %d: final table of %d rows, reference %d rows; %s", name, par, len(got), len(canon), diff)
		}
	}
}

// q9Reference joins every auction with its bids within [dateTime,
// expires] and keeps the first by price descending, dateTime ascending,
// then bidder and extra ascending.
func q9Reference(events []nexmark.Event) []Q9Row {
	auctions := map[int64]nexmark.Auction{}
	bids := map[int64][]nexmark.Bid{}
	for _, e := range events {
		switch e.Kind {
		case nexmark.AuctionEvent:
			auctions[e.Auction.ID] = e.Auction
		case nexmark.BidEvent:
			bids[e.Bid.Auction] = append(bids[e.Bid.Auction], e.Bid)
		}
	}
	var rows []Q9Row
	for id, a := range auctions {
		var valid []nexmark.Bid
		for _, b := range bids[id] {
			if a.DateTime <= b.DateTime && b.DateTime <= a.Expires {
				valid = append(valid, b)
			}
		}
		if len(valid) == 0 {
			continue
		}
		slices.SortFunc(valid, func(x, y nexmark.Bid) int {
			return cmp.Or(cmp.Compare(y.Price, x.Price), cmp.Compare(x.DateTime, y.DateTime),
				cmp.Compare(x.Bidder, y.Bidder), cmp.Compare(x.Extra, y.Extra))
		})
		b := valid[0]
		rows = append(rows, Q9Row{"", a.ID, a.ItemName, a.Description, a.InitialBid, a.Reserve, a.DateTime, a.Expires,
			a.Seller, a.Category, a.Extra, b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra})
	}
	return rows
}

func TestQ9(t *testing.T) {
	cfg := testConfig(50000)
	want := q9Reference(allEvents(t, cfg))
	checkChangelogQ9Q15Q16(t, "q9", cfg, want)
}
