package nexmark

import "math"

// Id offsets, as Beam's GeneratorConfig: ids start at these values so that
// queries find matches even in small data sets.
const (
	FirstPersonID   int64 = 1000
	FirstAuctionID  int64 = 1000
	FirstCategoryID int64 = 10
)

// Generator produces the Nexmark event sequence of one Beam GeneratorConfig:
// a contiguous range of event ids [FirstEventID, FirstEventID+MaxEvents)
// on a timeline starting at event number FirstEventNumber.
//
// Event i of a generator (i counting from 0, Beam's eventsCountSoFar) is a
// pure function of the configuration and i: it is computed from a
// java.util.Random seeded with the event's id. EventAt therefore gives random
// access, and a consumer that records "the next i" can resume exactly.
//
// A Generator is immutable and safe for concurrent use.
type Generator struct {
	cfg Config

	firstEventID     int64
	maxEvents        int64
	firstEventNumber int64

	// Derived from cfg, as in Beam's GeneratorConfig.
	interEventDelayUs []int64
	stepLengthSec     int64
	epochPeriodMs     int64
	eventsPerEpoch    int64

	personProp, auctionProp, totalProp int64
	eventsForAuctions                  int64 // events until NumInFlightAuctions more auctions

	tables *channelTables
}

// NewGenerator returns the generator for Beam's standard configuration
// (NexmarkUtils.standardGeneratorConfig): first event id 0, first event number
// 0, at most cfg.NumEvents events (see MaxEvents for 0). It is the single,
// unsplit generator that Beam's NexmarkUtils.standardEventIterator runs; Beam's
// bounded and unbounded sources instead run Split(cfg.NumEventGenerators).
func NewGenerator(cfg Config) (*Generator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := newGenerator(cfg, 0, cfg.NumEvents, 0)
	if len(g.interEventDelayUs) > 1 && g.eventsPerEpoch <= 0 {
		return nil, errRateTooLow
	}
	return g, nil
}

type configError string

func (e configError) Error() string { return string(e) }

const errRateTooLow = configError("nexmark: every step of the rate curve is shorter than one inter-event delay; increase RatePeriodSec or the rates")

// newGenerator ports the GeneratorConfig constructor. cfg must be valid.
func newGenerator(cfg Config, firstEventID, maxEventsOrZero, firstEventNumber int64) *Generator {
	g := &Generator{
		cfg:              cfg,
		firstEventID:     firstEventID,
		firstEventNumber: firstEventNumber,
		personProp:       int64(cfg.PersonProportion),
		auctionProp:      int64(cfg.AuctionProportion),
		totalProp:        int64(cfg.PersonProportion) + int64(cfg.AuctionProportion) + int64(cfg.BidProportion),
		tables:           getChannelTables(),
	}
	g.interEventDelayUs = cfg.interEventDelayUs()
	g.stepLengthSec = cfg.stepLengthSec()
	if maxEventsOrZero == 0 {
		g.maxEvents = unboundedMaxEvents(cfg)
	} else {
		g.maxEvents = maxEventsOrZero
	}
	if len(g.interEventDelayUs) > 1 {
		for _, d := range g.interEventDelayUs {
			n := (g.stepLengthSec * 1_000_000) / d
			g.eventsPerEpoch += n
			g.epochPeriodMs += (n * d) / 1000
		}
	}
	g.eventsForAuctions = (int64(cfg.NumInFlightAuctions) * g.totalProp) / g.auctionProp
	return g
}

// unboundedMaxEvents is Beam's maximum for "no maximum": scaled down from
// MaxInt64 so that size estimates cannot overflow.
func unboundedMaxEvents(cfg Config) int64 {
	total := int64(cfg.PersonProportion) + int64(cfg.AuctionProportion) + int64(cfg.BidProportion)
	maxSize := max(cfg.AvgPersonByteSize, cfg.AvgAuctionByteSize, cfg.AvgBidByteSize, 1)
	return math.MaxInt64 / (total * int64(maxSize))
}

// Config returns the configuration the generator was built from.
func (g *Generator) Config() Config { return g.cfg }

// FirstEventID is the id of the first event this generator can produce.
// Event ids are unique across the generators of a Split and seed each
// event's randomness.
func (g *Generator) FirstEventID() int64 { return g.firstEventID }

// FirstEventNumber is the event number (position on the timeline, which sets
// the timestamp) of this generator's first event.
func (g *Generator) FirstEventNumber() int64 { return g.firstEventNumber }

// MaxEvents is the number of events this generator produces: Config.NumEvents
// for NewGenerator, or, when NumEvents is 0, Beam's "unbounded" value
// MaxInt64 / ((PersonProportion+AuctionProportion+BidProportion) * largest
// average byte size) — 368,934,881,474,191 with the default configuration.
func (g *Generator) MaxEvents() int64 { return g.maxEvents }

// Split divides the generator's id range into n generators, as Beam's
// GeneratorConfig.split: each gets MaxEvents/n consecutive event ids (the last
// one also gets the remainder) and all of them share this generator's
// timeline, starting at FirstEventNumber. Split(1) returns g itself. It
// panics if n < 1.
//
// Generator k of the result produces exactly the events Beam's k-th split
// source produces. Like Beam, a part whose share rounds down to 0 events
// (MaxEvents < n) is treated as unbounded, because Beam's GeneratorConfig
// reads a maximum of 0 as "no maximum".
func (g *Generator) Split(n int) []*Generator {
	if n < 1 {
		panic("nexmark: Generator.Split: n must be >= 1")
	}
	if n == 1 {
		return []*Generator{g}
	}
	out := make([]*Generator, 0, n)
	sub := g.maxEvents / int64(n)
	first := g.firstEventID
	for i := 0; i < n; i++ {
		if i == n-1 {
			sub = g.maxEvents - sub*int64(n-1)
		}
		out = append(out, g.copyWith(first, sub, g.firstEventNumber))
		first += sub
	}
	return out
}

func (g *Generator) copyWith(firstEventID, maxEvents, firstEventNumber int64) *Generator {
	c := *g
	c.firstEventID = firstEventID
	c.maxEvents = maxEvents
	c.firstEventNumber = firstEventNumber
	if maxEvents == 0 {
		// Beam's constructor treats 0 as "unbounded" here too.
		c.maxEvents = unboundedMaxEvents(g.cfg)
	}
	return &c
}

// adjustedEventNumber ports GeneratorConfig.nextAdjustedEventNumber: the
// timeline position of event i once out-of-order groups are shuffled.
func (g *Generator) adjustedEventNumber(i int64) int64 {
	n := g.cfg.OutOfOrderGroupSize
	num := g.firstEventNumber + i
	return (num/n)*n + (num*953)%n
}

// EventID returns the id of event i: the seed of its randomness, and what
// picks its kind and entity ids.
func (g *Generator) EventID(i int64) int64 {
	return g.firstEventID + g.adjustedEventNumber(i)
}

// Timestamp returns the event time of event i in epoch milliseconds (Beam's
// adjusted event timestamp, which is also the entity's DateTime).
func (g *Generator) Timestamp(i int64) int64 {
	return g.timestampForEventNumber(g.adjustedEventNumber(i))
}

// Watermark returns a lower bound, in epoch milliseconds, on the event time
// of event i and of every later event of this generator (Beam's NextEvent
// watermark).
func (g *Generator) Watermark(i int64) int64 {
	n := g.cfg.OutOfOrderGroupSize
	num := g.firstEventNumber + i
	return g.timestampForEventNumber((num / n) * n)
}

// InterEventDelayUs returns the inter-event delay, in microseconds, in force
// at event i of this generator's timeline.
func (g *Generator) InterEventDelayUs(i int64) int64 {
	_, d := g.timestampAndDelay(g.firstEventNumber + i)
	return d
}

func (g *Generator) timestampForEventNumber(num int64) int64 {
	if len(g.interEventDelayUs) == 1 {
		return g.cfg.BaseTime + (num*g.interEventDelayUs[0])/1000
	}
	ts, _ := g.timestampAndDelay(num)
	return ts
}

// timestampAndDelay ports GeneratorConfig.timestampAndInterEventDelayUsForEvent.
func (g *Generator) timestampAndDelay(num int64) (int64, int64) {
	if len(g.interEventDelayUs) == 1 {
		return g.cfg.BaseTime + (num*g.interEventDelayUs[0])/1000, g.interEventDelayUs[0]
	}
	epoch := num / g.eventsPerEpoch
	n := num % g.eventsPerEpoch
	var offsetInEpochMs int64
	for _, d := range g.interEventDelayUs {
		cycle := (g.stepLengthSec * 1_000_000) / d
		if n < cycle {
			offsetInCycleUs := n * d
			return g.cfg.BaseTime + epoch*g.epochPeriodMs + offsetInEpochMs + offsetInCycleUs/1000, d
		}
		n -= cycle
		offsetInEpochMs += (cycle * d) / 1000
	}
	panic("nexmark: internal error: eventsPerEpoch incorrect")
}

// EventAt stores event i of this generator (0 <= i) into e, overwriting all
// of e. Events 0 through MaxEvents()-1 are the generator's own; beyond that
// the same formula continues (into ids that a Split assigns to the next
// generator). It panics if i < 0.
//
// EventAt allocates at most once per event: the random strings of an event
// share one backing string.
func (g *Generator) EventAt(i int64, e *Event) {
	if i < 0 {
		panic("nexmark: Generator.EventAt: negative event index")
	}
	adj := g.adjustedEventNumber(i)
	id := g.firstEventID + adj
	ts := g.timestampForEventNumber(adj)
	r := NewJavaRandom(id)
	rem := id % g.totalProp
	switch {
	case rem < g.personProp:
		e.Kind = PersonEvent
		e.Auction = Auction{}
		e.Bid = Bid{}
		g.nextPerson(id, &r, ts, &e.Person)
	case rem < g.personProp+g.auctionProp:
		e.Kind = AuctionEvent
		e.Person = Person{}
		e.Bid = Bid{}
		g.nextAuction(adj, id, &r, ts, &e.Auction)
	default:
		e.Kind = BidEvent
		e.Person = Person{}
		e.Auction = Auction{}
		g.nextBid(id, &r, ts, &e.Bid)
	}
}

// Cursor returns a sequential reader over this generator starting at event
// index start.
func (g *Generator) Cursor(start int64) *Cursor {
	return &Cursor{g: g, next: start}
}

// Cursor reads a generator's events in order. Its position is the index of
// the next event it returns, so saving Position and later calling SetPosition (or
// Generator.Cursor) with it resumes exactly. A Cursor is not safe for
// concurrent use; create one per goroutine.
type Cursor struct {
	g    *Generator
	next int64
}

// Next stores the next event into e and advances, returning false without
// touching e once MaxEvents events have been read.
func (c *Cursor) Next(e *Event) bool {
	if c.next >= c.g.maxEvents {
		return false
	}
	c.g.EventAt(c.next, e)
	c.next++
	return true
}

// Position returns the index of the event the next call to Next returns.
func (c *Cursor) Position() int64 { return c.next }

// SetPosition moves the cursor so that Next returns event pos next.
func (c *Cursor) SetPosition(pos int64) { c.next = pos }

// Generator returns the generator the cursor reads.
func (c *Cursor) Generator() *Generator { return c.g }
