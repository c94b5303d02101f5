package queries

import (
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

func TestQ8(t *testing.T) {
	cfg := testConfig(100000)
	cfg.FirstEventRate, cfg.NextEventRate = 1000, 1000 // 100 s of events
	type person struct {
		id    int64
		name  string
		start int64
	}
	type seller struct{ id, start int64 }
	// P: GROUP BY id, name, window; A: GROUP BY seller, window.
	people := map[person]bool{}
	sellers := map[seller]bool{}
	for _, e := range allEvents(t, cfg) {
		switch e.Kind {
		case nexmark.PersonEvent:
			p := e.Person
			people[person{p.ID, p.Name, p.DateTime - p.DateTime%10000}] = true
		case nexmark.AuctionEvent:
			a := e.Auction
			sellers[seller{a.Seller, a.DateTime - a.DateTime%10000}] = true
		}
	}
	var want []Q8Row
	for p := range people {
		if sellers[seller{p.id, p.start}] {
			want = append(want, Q8Row{p.id, p.name, p.start})
		}
	}
	t.Logf("%d people, %d rows", len(people), len(want))
	check(t, "q8", cfg, rowsJSON(t, want))
}
