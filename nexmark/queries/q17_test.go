package queries

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

// checkChangelogQ17to19 runs the changelog query name at parallelism 1 and
// 4 and compares the table its rows fold into (applyChangelog) with want,
// the reference's final rows (without op). Rows are compared in
// applyChangelog's canonical encoding.
func checkChangelogQ17to19[T any](t *testing.T, name string, cfg nexmark.Config, want []T) {
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

func TestQ17(t *testing.T) {
	cfg := testConfig(50000)
	// 50,000 events take 5 s of event time; start 2.5 s before midnight
	// so that groups split across two days.
	cfg.BaseTime = nexmark.DefaultBaseTime - 2500
	type group struct {
		auction int64
		day     string
	}
	rows := map[group]*Q17Row{}
	for _, e := range allEvents(t, cfg) {
		if e.Kind != nexmark.BidEvent {
			continue
		}
		b := e.Bid
		g := group{b.Auction, q17Day(b.DateTime)}
		r := rows[g]
		if r == nil {
			r = &Q17Row{Auction: g.auction, Day: g.day, MinPrice: b.Price, MaxPrice: b.Price}
			rows[g] = r
		}
		r.TotalBids++
		if b.Price < 10000 {
			r.Rank1Bids++
		}
		if b.Price >= 10000 && b.Price < 1000000 {
			r.Rank2Bids++
		}
		if b.Price >= 1000000 {
			r.Rank3Bids++
		}
		if b.Price < r.MinPrice {
			r.MinPrice = b.Price
		}
		if b.Price > r.MaxPrice {
			r.MaxPrice = b.Price
		}
		r.SumPrice += b.Price
	}
	var want []Q17Row
	days := map[string]bool{}
	for _, r := range rows {
		days[r.Day] = true
		r.AvgPrice = r.SumPrice / r.TotalBids
		want = append(want, *r)
	}
	if len(days) != 2 {
		t.Fatalf("reference spans days %v, want two", days)
	}
	checkChangelogQ17to19(t, "q17", cfg, want)
}
