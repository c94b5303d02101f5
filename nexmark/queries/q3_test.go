package queries

import (
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

func TestQ3(t *testing.T) {
	cfg := testConfig(50000)
	var auctions []nexmark.Auction
	var persons []nexmark.Person
	for _, e := range allEvents(t, cfg) {
		switch e.Kind {
		case nexmark.AuctionEvent:
			auctions = append(auctions, e.Auction)
		case nexmark.PersonEvent:
			persons = append(persons, e.Person)
		}
	}
	var want []Q3Row
	for _, a := range auctions {
		for _, p := range persons {
			if a.Seller == p.ID && a.Category == 10 && (p.State == "OR" || p.State == "ID" || p.State == "CA") {
				want = append(want, Q3Row{p.Name, p.City, p.State, a.ID})
			}
		}
	}
	t.Logf("%d rows", len(want))
	check(t, "q3", cfg, rowsJSON(t, want))
}
