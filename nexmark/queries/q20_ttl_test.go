package queries

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector/connectortest"
	"github.com/weir-stream/weir/nexmark"
)

// runQ20Paced runs q20 under o over events paced on a fake clock and
// returns the auction and bidder of each row, sorted.
func runQ20Paced(t *testing.T, events []connectortest.Timed[nexmark.Event], o Options) []string {
	t.Helper()
	var out bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		q, _ := Lookup("q20")
		p := weir.NewPipeline(weir.WithStallTimeout(0, nil)) // the source waits hours of fake time
		if err := q.BuildWith(EventsFrom(p, connectortest.Paced(events)), Output{Stdout: &out}, o); err != nil {
			t.Fatal(err)
		}
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	var rows []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l != "" {
			rows = append(rows, l[:strings.Index(l, `,"price"`)]+"}")
		}
	}
	slices.Sort(rows)
	return rows
}

// With a state time-to-live q20 forgets an auction an hour after it came,
// and a bid an hour after it began waiting for its auction.
func TestQ20WithAStateTTLForgetsOldAuctionsAndBids(t *testing.T) {
	auction := func(id int64) nexmark.Event {
		return nexmark.Event{Kind: nexmark.AuctionEvent, Auction: nexmark.Auction{ID: id, Category: q20Category}}
	}
	bid := func(id, bidder int64) nexmark.Event {
		return nexmark.Event{Kind: nexmark.BidEvent, Bid: nexmark.Bid{Auction: id, Bidder: bidder}}
	}
	events := []connectortest.Timed[nexmark.Event]{
		{At: 0, V: auction(1)},
		{At: 0, V: bid(2, 20)}, // waits for auction 2
		{At: 30 * time.Minute, V: bid(1, 10)},
		{At: 30 * time.Minute, V: bid(2, 21)},
		{At: 2 * time.Hour, V: bid(1, 11)},
		{At: 2 * time.Hour, V: auction(2)},
	}
	for _, tc := range []struct {
		ttl  time.Duration
		want []string
	}{
		{0, []string{`{"auction":1,"bidder":10}`, `{"auction":1,"bidder":11}`, `{"auction":2,"bidder":20}`, `{"auction":2,"bidder":21}`}},
		{time.Hour, []string{`{"auction":1,"bidder":10}`}},
	} {
		got := runQ20Paced(t, events, Options{StateTTL: tc.ttl})
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("state time-to-live %v: got rows %q, want %q", tc.ttl, got, tc.want)
		}
	}
}

func TestOptionsAQueryDoesNotTakeAreRefused(t *testing.T) {
	q, _ := Lookup("q0")
	p := weir.NewPipeline()
	in := EventsFrom(p, connectortest.Paced[nexmark.Event](nil))
	if err := q.BuildWith(in, Output{Discard: true}, Options{StateTTL: time.Hour}); err == nil {
		t.Fatal("q0 took a state time-to-live")
	}
}
