package nexmark

import (
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func mustGenerator(t testing.TB, c Config) *Generator {
	t.Helper()
	g, err := NewGenerator(c)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestDefaultConfigMatchesBeam(t *testing.T) {
	c := DefaultConfig()
	want := Config{
		NumEvents: 100000, NumEventGenerators: 100, RateShape: RateShapeSine,
		FirstEventRate: 10000, NextEventRate: 10000, RateUnit: PerSecond, RatePeriodSec: 600,
		BaseTime: 1436918400000, PersonProportion: 1, AuctionProportion: 3, BidProportion: 46,
		AvgPersonByteSize: 200, AvgAuctionByteSize: 500, AvgBidByteSize: 100,
		HotAuctionRatio: 2, HotSellersRatio: 4, HotBiddersRatio: 4,
		NumInFlightAuctions: 100, NumActivePeople: 1000, OutOfOrderGroupSize: 1,
	}
	if c != want {
		t.Fatalf("DefaultConfig() = %+v, want %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	g := mustGenerator(t, c)
	// 10,000 events/s over 100 generators: 10 ms between one generator's events.
	if d := g.InterEventDelayUs(0); d != 10000 {
		t.Errorf("inter-event delay = %d us, want 10000", d)
	}
	if g.MaxEvents() != 100000 || g.FirstEventID() != 0 || g.FirstEventNumber() != 0 {
		t.Errorf("got max %d first id %d first number %d", g.MaxEvents(), g.FirstEventID(), g.FirstEventNumber())
	}
	c.NumEvents = 0
	if got := mustGenerator(t, c).MaxEvents(); got != 368934881474191 {
		t.Errorf("unbounded MaxEvents = %d, want 368934881474191", got)
	}
}

func TestValidate(t *testing.T) {
	bad := []func(*Config){
		func(c *Config) { c.NumEvents = -1 },
		func(c *Config) { c.NumEventGenerators = 0 },
		func(c *Config) { c.FirstEventRate = 0 },
		func(c *Config) { c.NextEventRate = -5 },
		func(c *Config) { c.NextEventRate = 20000; c.RatePeriodSec = 0 },
		func(c *Config) { c.RateShape = 7 },
		func(c *Config) { c.RateUnit = 7 },
		func(c *Config) { c.PersonProportion = 0 },
		func(c *Config) { c.AuctionProportion = 0 },
		func(c *Config) { c.BidProportion = -1 },
		func(c *Config) { c.HotAuctionRatio = 0 },
		func(c *Config) { c.HotSellersRatio = 0 },
		func(c *Config) { c.HotBiddersRatio = 0 },
		func(c *Config) { c.NumActivePeople = -1 },
		func(c *Config) { c.NumInFlightAuctions = -1 },
		func(c *Config) { c.OutOfOrderGroupSize = 0 },
		func(c *Config) { c.AvgBidByteSize = -1 },
	}
	for i, f := range bad {
		c := DefaultConfig()
		f(&c)
		if _, err := NewGenerator(c); err == nil {
			t.Errorf("case %d: NewGenerator(%+v) succeeded, want error", i, c)
		}
	}
	// A rate curve whose steps are shorter than one event.
	c := DefaultConfig()
	c.FirstEventRate, c.NextEventRate, c.RatePeriodSec = 1, 2, 1
	if _, err := NewGenerator(c); err == nil {
		t.Error("NewGenerator with empty rate steps succeeded, want error")
	}
}

// TestEventMix checks the id layout: in each block of 50 ids, 1 person, 3
// auctions, 46 bids, with consecutive person and auction ids.
func TestEventMix(t *testing.T) {
	g := mustGenerator(t, DefaultConfig())
	var e Event
	counts := map[EventKind]int{}
	nextPerson, nextAuction := FirstPersonID, FirstAuctionID
	for i := int64(0); i < 5000; i++ {
		g.EventAt(i, &e)
		counts[e.Kind]++
		if want := [...]EventKind{PersonEvent, AuctionEvent, AuctionEvent, AuctionEvent}; i%50 < 4 && e.Kind != want[i%50] {
			t.Fatalf("event %d kind %v, want %v", i, e.Kind, want[i%50])
		}
		switch e.Kind {
		case PersonEvent:
			if e.Person.ID != nextPerson {
				t.Fatalf("event %d: person id %d, want %d", i, e.Person.ID, nextPerson)
			}
			nextPerson++
			if e.Auction != (Auction{}) || e.Bid != (Bid{}) {
				t.Fatalf("event %d: stale members %+v", i, e)
			}
		case AuctionEvent:
			if e.Auction.ID != nextAuction {
				t.Fatalf("event %d: auction id %d, want %d", i, e.Auction.ID, nextAuction)
			}
			nextAuction++
			if e.Auction.Expires <= e.Auction.DateTime || e.Auction.Reserve < e.Auction.InitialBid {
				t.Fatalf("event %d: implausible auction %+v", i, e.Auction)
			}
		case BidEvent:
			if e.Bid.Auction >= nextAuction+auctionIDLead || e.Bid.Bidder >= nextPerson+personIDLead {
				t.Fatalf("event %d: bid refers too far ahead: %+v", i, e.Bid)
			}
		}
		if e.DateTime() != g.Timestamp(i) {
			t.Fatalf("event %d: DateTime %d, Timestamp %d", i, e.DateTime(), g.Timestamp(i))
		}
	}
	if counts[PersonEvent] != 100 || counts[AuctionEvent] != 300 || counts[BidEvent] != 4600 {
		t.Errorf("counts = %v", counts)
	}
}

// TestRandomAccessMatchesSequential checks that EventAt(i) equals the i-th
// event of sequential generation, whatever order events are asked for, with
// resumption mid-stream and concurrent readers.
func TestRandomAccessMatchesSequential(t *testing.T) {
	c := DefaultConfig()
	c.NumEvents = 3000
	c.OutOfOrderGroupSize = 10
	c.FirstEventRate, c.NextEventRate, c.RatePeriodSec = 1000, 3000, 60
	g := mustGenerator(t, c)
	var seq []Event
	cur := g.Cursor(0)
	var e Event
	for cur.Next(&e) {
		seq = append(seq, e)
	}
	if int64(len(seq)) != g.MaxEvents() {
		t.Fatalf("cursor read %d events, want %d", len(seq), g.MaxEvents())
	}
	if cur.Next(&e) {
		t.Fatal("Next past the end returned true")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, i := range rng.Perm(len(seq)) {
		g.EventAt(int64(i), &e) // e holds some other event before the call
		if e != seq[i] {
			t.Fatalf("EventAt(%d) = %+v, want %+v", i, e, seq[i])
		}
	}
	// Resume from a saved position.
	cur.SetPosition(1234)
	for i := 1234; i < 1300; i++ {
		if !cur.Next(&e) || e != seq[i] {
			t.Fatalf("resumed cursor event %d = %+v, want %+v", i, e, seq[i])
		}
	}
	// Concurrent readers share the generator.
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var e Event
			for i := w; i < len(seq); i += 4 {
				g.EventAt(int64(i), &e)
				if e != seq[i] {
					t.Errorf("concurrent EventAt(%d) mismatch", i)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	// Watermark(i) bounds the timestamps of event i and all later events.
	minLater := int64(math.MaxInt64)
	for i := len(seq) - 1; i >= 0; i-- {
		minLater = min(minLater, seq[i].DateTime())
		if wm := g.Watermark(int64(i)); wm > minLater {
			t.Fatalf("Watermark(%d) = %d > later timestamp %d", i, wm, minLater)
		}
	}
}

// TestSplitCoverage checks that Split partitions the id range as Beam's
// GeneratorConfig.split does: contiguous, in order, the last generator taking
// the remainder, all on the parent's timeline. Field-for-field equality of
// split generators with Beam's is checked by the golden split file.
func TestSplitCoverage(t *testing.T) {
	for _, tc := range []struct {
		numEvents int64
		n         int
	}{{100000, 100}, {1000, 3}, {1001, 7}, {50, 50}, {10, 1}} {
		c := DefaultConfig()
		c.NumEvents = tc.numEvents
		g := mustGenerator(t, c)
		parts := g.Split(tc.n)
		if len(parts) != tc.n {
			t.Fatalf("Split(%d) returned %d generators", tc.n, len(parts))
		}
		seen := make([]bool, tc.numEvents)
		next := int64(0)
		for k, p := range parts {
			if p.FirstEventID() != next || p.FirstEventNumber() != 0 {
				t.Fatalf("%v: part %d starts at id %d number %d, want id %d number 0", tc, k, p.FirstEventID(), p.FirstEventNumber(), next)
			}
			wantMax := tc.numEvents / int64(tc.n)
			if k == tc.n-1 {
				wantMax = tc.numEvents - wantMax*int64(tc.n-1)
			}
			if p.MaxEvents() != wantMax {
				t.Fatalf("%v: part %d has %d events, want %d", tc, k, p.MaxEvents(), wantMax)
			}
			for i := int64(0); i < p.MaxEvents(); i++ {
				id := p.EventID(i)
				if seen[id] {
					t.Fatalf("%v: id %d generated twice", tc, id)
				}
				seen[id] = true
				if p.Timestamp(i) != g.Timestamp(i) {
					t.Fatalf("%v: part %d event %d not on the parent's timeline", tc, k, i)
				}
			}
			next += p.MaxEvents()
		}
		for id, ok := range seen {
			if !ok {
				t.Fatalf("%v: id %d never generated", tc, id)
			}
		}
	}
	if g := mustGenerator(t, DefaultConfig()); g.Split(1)[0] != g {
		t.Error("Split(1) did not return the generator itself")
	}
}

func TestChannelsAndURLs(t *testing.T) {
	tab := getChannelTables()
	urlRE := regexp.MustCompile(`^https://www\.nexmark\.com/[a-z_]{3,4}/[a-z_]{3,4}/[a-z_]{3,4}/item\.htm\?query=1(&channel_id=-?[0-9]+)?$`)
	withID := 0
	for i := range numChannels {
		if want := "channel-" + strconv.Itoa(i); tab.names[i] != want {
			t.Fatalf("channel %d named %q", i, tab.names[i])
		}
		if !urlRE.MatchString(tab.urls[i]) {
			t.Fatalf("channel %d url %q", i, tab.urls[i])
		}
		if strings.Contains(tab.urls[i], "&channel_id=") {
			withID++
		}
	}
	if withID < 8800 || withID > 9200 {
		t.Errorf("%d of %d channel URLs carry a channel_id, want about 9 in 10", withID, numChannels)
	}
	if u := tab.urls[1]; strings.Contains(u, "&") && !strings.HasSuffix(u, "&channel_id=-2147483648") {
		t.Errorf("channel 1 url %q: Math.abs(Integer.reverse(1)) is -2147483648 in Java", u)
	}
	if u := tab.urls[2]; strings.Contains(u, "&") && !strings.HasSuffix(u, "&channel_id=1073741824") {
		t.Errorf("channel 2 url %q", u)
	}
	for _, u := range tab.hotURLs {
		if !urlRE.MatchString(u) || strings.Contains(u, "&") {
			t.Errorf("hot url %q", u)
		}
	}
	// About half the bids use a hot channel.
	g := mustGenerator(t, DefaultConfig())
	var e Event
	hot, bids := 0, 0
	for i := int64(0); i < 20000; i++ {
		g.EventAt(i, &e)
		if e.Kind != BidEvent {
			continue
		}
		bids++
		if !strings.HasPrefix(e.Bid.Channel, "channel-") {
			hot++
		}
	}
	if f := float64(hot) / float64(bids); f < 0.47 || f > 0.53 {
		t.Errorf("hot channel fraction %.3f, want about 0.5", f)
	}
}

func TestEventAtAllocations(t *testing.T) {
	g := mustGenerator(t, DefaultConfig())
	var e Event
	i := int64(0)
	allocs := testing.AllocsPerRun(5000, func() {
		g.EventAt(i, &e)
		i++
	})
	if allocs > 1 {
		t.Errorf("EventAt allocates %.2f times per event, want at most 1", allocs)
	}
}
