package queries

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/nexmark"
)

// pacedEvent is an event a pacedSource emits once the (fake) clock is At
// after it opened.
type pacedEvent struct {
	At time.Duration
	E  nexmark.Event
}

type pacedSource struct{ events []pacedEvent }

func (s pacedSource) Open(context.Context, connector.SubtaskInfo, connector.Position) (connector.Reader[nexmark.Event], error) {
	return &pacedReader{events: s.events, start: time.Now()}, nil
}

// pacedReader reports nothing once, without waiting, after it returned
// events, so that the source ships them before the clock moves on.
type pacedReader struct {
	events []pacedEvent
	start  time.Time
	sent   bool
}

func (r *pacedReader) Read(ctx context.Context, buf []nexmark.Event) (int, error) {
	if len(r.events) == 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(buf) && n < len(r.events) && time.Since(r.start) >= r.events[n].At {
		buf[n] = r.events[n].E
		n++
	}
	r.events = r.events[n:]
	if n > 0 || r.sent {
		r.sent = n > 0
		return n, nil
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(r.events[0].At - time.Since(r.start)):
		return 0, nil
	}
}

func (r *pacedReader) Position() connector.Position { return nil }
func (r *pacedReader) Close() error                 { return nil }

// runQ20Paced runs q20 under o over events paced on a fake clock and
// returns the auction and bidder of each row, sorted.
func runQ20Paced(t *testing.T, events []pacedEvent, o Options) []string {
	t.Helper()
	var out bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		q, _ := Lookup("q20")
		p := weir.NewPipeline(weir.WithStallTimeout(0, nil)) // the source waits hours of fake time
		if err := q.BuildWith(EventsFrom(p, pacedSource{events}), Output{Stdout: &out}, o); err != nil {
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
	events := []pacedEvent{
		{0, auction(1)},
		{0, bid(2, 20)}, // waits for auction 2
		{30 * time.Minute, bid(1, 10)},
		{30 * time.Minute, bid(2, 21)},
		{2 * time.Hour, bid(1, 11)},
		{2 * time.Hour, auction(2)},
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
	in := EventsFrom(p, pacedSource{})
	if err := q.BuildWith(in, Output{Discard: true}, Options{StateTTL: time.Hour}); err == nil {
		t.Fatal("q0 took a state time-to-live")
	}
}
