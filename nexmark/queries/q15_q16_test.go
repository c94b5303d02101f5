package queries

import (
	"fmt"
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

// q15q16Config spans three UTC days: one event every 6 s of event time.
func q15q16Config() nexmark.Config {
	cfg := testConfig(40000)
	cfg.FirstEventRate, cfg.NextEventRate, cfg.RateUnit = 10, 10, nexmark.PerMinute
	return cfg
}

// q15q16Group is the reference's state of one group: the bids and the
// distinct bidders and auctions per price class (0: all).
type q15q16Group struct {
	bids     [4]int64
	bidders  [4]map[int64]bool
	auctions [4]map[int64]bool
	minute   string
}

func (g *q15q16Group) add(b nexmark.Bid, minute string) {
	class := 3
	if b.Price < 10000 {
		class = 1
	} else if b.Price < 1000000 {
		class = 2
	}
	for _, c := range []int{0, class} {
		g.bids[c]++
		if g.bidders[c] == nil {
			g.bidders[c], g.auctions[c] = map[int64]bool{}, map[int64]bool{}
		}
		g.bidders[c][b.Bidder] = true
		g.auctions[c][b.Auction] = true
	}
	if minute > g.minute {
		g.minute = minute
	}
}

func (g *q15q16Group) counts() q15Counts {
	return q15Counts{g.bids[0], g.bids[1], g.bids[2], g.bids[3],
		int64(len(g.bidders[0])), int64(len(g.bidders[1])), int64(len(g.bidders[2])), int64(len(g.bidders[3])),
		int64(len(g.auctions[0])), int64(len(g.auctions[1])), int64(len(g.auctions[2])), int64(len(g.auctions[3]))}
}

// utcDayMinute formats an epoch-ms time as yyyy-MM-dd and HH:mm in UTC,
// by arithmetic on the civil date.
func utcDayMinute(ms int64) (string, string) {
	days, rem := ms/86_400_000, ms%86_400_000 // times are positive
	// Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
	z := days + 719468
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return fmt.Sprintf("%04d-%02d-%02d", y, m, d), fmt.Sprintf("%02d:%02d", rem/3_600_000, rem/60_000%60)
}

func TestQ15(t *testing.T) {
	cfg := q15q16Config()
	groups := map[string]*q15q16Group{}
	for _, e := range allEvents(t, cfg) {
		if e.Kind != nexmark.BidEvent {
			continue
		}
		day, minute := utcDayMinute(e.Bid.DateTime)
		if groups[day] == nil {
			groups[day] = &q15q16Group{}
		}
		groups[day].add(e.Bid, minute)
	}
	var want []Q15Row
	for day, g := range groups {
		want = append(want, Q15Row{Day: day, q15Counts: g.counts()})
	}
	if len(want) < 3 {
		t.Fatalf("reference has %d days, want at least 3", len(want))
	}
	checkChangelog(t, "q15", cfg, want)
}

func TestQ16(t *testing.T) {
	cfg := q15q16Config()
	type key struct{ channel, day string }
	groups := map[key]*q15q16Group{}
	for _, e := range allEvents(t, cfg) {
		if e.Kind != nexmark.BidEvent {
			continue
		}
		day, minute := utcDayMinute(e.Bid.DateTime)
		k := key{e.Bid.Channel, day}
		if groups[k] == nil {
			groups[k] = &q15q16Group{}
		}
		groups[k].add(e.Bid, minute)
	}
	var want []Q16Row
	for k, g := range groups {
		want = append(want, Q16Row{Channel: k.channel, Day: k.day, Minute: g.minute, q15Counts: g.counts()})
	}
	checkChangelog(t, "q16", cfg, want)
}
