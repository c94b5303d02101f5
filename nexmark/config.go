package nexmark

import (
	"errors"
	"fmt"
	"math"
)

// RateShape is the shape of the event-rate curve over time, as Beam's
// NexmarkUtils.RateShape. It only matters when FirstEventRate differs from
// NextEventRate.
type RateShape int

const (
	// RateShapeSine cycles through 10 steps approximating a cosine between
	// FirstEventRate and NextEventRate. It is Beam's default.
	RateShapeSine RateShape = iota
	// RateShapeSquare alternates between FirstEventRate and NextEventRate.
	RateShapeSquare
)

// String returns Beam's enum name (SINE, SQUARE).
func (s RateShape) String() string {
	switch s {
	case RateShapeSine:
		return "SINE"
	case RateShapeSquare:
		return "SQUARE"
	}
	return fmt.Sprintf("RateShape(%d)", int(s))
}

// RateUnit is the unit of FirstEventRate and NextEventRate, as Beam's
// NexmarkUtils.RateUnit.
type RateUnit int

const (
	// PerSecond means events per second. It is Beam's default.
	PerSecond RateUnit = iota
	// PerMinute means events per minute.
	PerMinute
)

// String returns Beam's enum name (PER_SECOND, PER_MINUTE).
func (u RateUnit) String() string {
	switch u {
	case PerSecond:
		return "PER_SECOND"
	case PerMinute:
		return "PER_MINUTE"
	}
	return fmt.Sprintf("RateUnit(%d)", int(u))
}

func (u RateUnit) usPerUnit() int64 {
	if u == PerMinute {
		return 60_000_000
	}
	return 1_000_000
}

// rateToPeriodUs ports RateUnit.rateToPeriodUs: the inter-event period in
// microseconds for rate events per unit, rounded to nearest.
func (u RateUnit) rateToPeriodUs(rate int64) int64 {
	return (u.usPerUnit() + rate/2) / rate
}

// DefaultBaseTime is Beam's NexmarkUtils.BASE_TIME, 2015-07-15T00:00:00Z in
// epoch milliseconds: the event time of event number 0.
const DefaultBaseTime int64 = 1436918400000

// Config holds the parameters of the event generator. Field names and
// defaults follow Beam's NexmarkConfiguration (only the fields that influence
// generated events are kept); the three proportions follow the Flink nexmark
// configuration, whose defaults equal Beam's fixed 1/3/46.
//
// A Config is a plain value; NewGenerator validates it.
type Config struct {
	// NumEvents is the number of events to generate. 0 means "unbounded",
	// which Beam implements as a very large maximum (see Generator.MaxEvents).
	NumEvents int64
	// NumEventGenerators is the number of parallel generators Beam's sources
	// split into. It also scales each generator's inter-event delay so that
	// the generators together reach FirstEventRate: each of them runs its own
	// timeline NumEventGenerators times slower.
	NumEventGenerators int

	// RateShape, FirstEventRate, NextEventRate, RateUnit and RatePeriodSec
	// define the overall event rate, which determines event timestamps.
	RateShape      RateShape
	FirstEventRate int
	NextEventRate  int
	RateUnit       RateUnit
	RatePeriodSec  int

	// BaseTime is the event time of event number 0, in epoch milliseconds.
	BaseTime int64

	// PersonProportion, AuctionProportion and BidProportion are the relative
	// frequencies of the three event kinds. Event id modulo their sum picks the
	// kind: ids below PersonProportion are people, the next AuctionProportion
	// ids auctions, the rest bids.
	PersonProportion  int
	AuctionProportion int
	BidProportion     int

	// AvgPersonByteSize, AvgAuctionByteSize and AvgBidByteSize are the
	// average idealized event sizes; the "extra" field pads events towards
	// them.
	AvgPersonByteSize  int
	AvgAuctionByteSize int
	AvgBidByteSize     int

	// HotAuctionRatio: a bid goes to a hot auction with probability
	// 1 - 1/HotAuctionRatio.
	HotAuctionRatio int
	// HotSellersRatio: an auction is by a hot seller with probability
	// 1 - 1/HotSellersRatio.
	HotSellersRatio int
	// HotBiddersRatio: a bid is by a hot bidder with probability
	// 1 - 1/HotBiddersRatio.
	HotBiddersRatio int

	// NumInFlightAuctions is the average number of auctions in flight at any
	// time, per generator. It sets auction lengths and which auctions
	// non-hot bids pick.
	NumInFlightAuctions int
	// NumActivePeople is the number of most recent people considered for
	// placing non-hot auctions and bids.
	NumActivePeople int

	// OutOfOrderGroupSize is the number of events per generator in an
	// out-of-order group; 1 means events are in order.
	OutOfOrderGroupSize int64
}

// DefaultConfig returns Beam's NexmarkConfiguration defaults: 100,000 events,
// 100 event generators, a SINE rate shape at 10,000 events per second (first
// and next rate equal, so the rate is constant), 600 s rate period, person,
// auction and bid proportions 1/3/46, average sizes 200/500/100 bytes, hot
// ratios 2 (auctions), 4 (sellers) and 4 (bidders), 100 in-flight auctions,
// 1000 active people, in-order events, base time 2015-07-15T00:00:00Z.
func DefaultConfig() Config {
	return Config{
		NumEvents:           100_000,
		NumEventGenerators:  100,
		RateShape:           RateShapeSine,
		FirstEventRate:      10_000,
		NextEventRate:       10_000,
		RateUnit:            PerSecond,
		RatePeriodSec:       600,
		BaseTime:            DefaultBaseTime,
		PersonProportion:    1,
		AuctionProportion:   3,
		BidProportion:       46,
		AvgPersonByteSize:   200,
		AvgAuctionByteSize:  500,
		AvgBidByteSize:      100,
		HotAuctionRatio:     2,
		HotSellersRatio:     4,
		HotBiddersRatio:     4,
		NumInFlightAuctions: 100,
		NumActivePeople:     1000,
		OutOfOrderGroupSize: 1,
	}
}

// Validate reports whether c can drive a generator without the divisions by
// zero, non-positive random bounds or overflows that the Java reference
// would throw on.
func (c Config) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf("nexmark: "+format, args...))
		}
	}
	check(c.NumEvents >= 0, "NumEvents must be >= 0, got %d", c.NumEvents)
	check(c.NumEventGenerators >= 1, "NumEventGenerators must be >= 1, got %d", c.NumEventGenerators)
	check(c.RateShape == RateShapeSine || c.RateShape == RateShapeSquare, "unknown RateShape %d", int(c.RateShape))
	check(c.RateUnit == PerSecond || c.RateUnit == PerMinute, "unknown RateUnit %d", int(c.RateUnit))
	check(c.FirstEventRate >= 1 && c.FirstEventRate <= 1<<30, "FirstEventRate must be in [1, 2^30], got %d", c.FirstEventRate)
	check(c.NextEventRate >= 1 && c.NextEventRate <= 1<<30, "NextEventRate must be in [1, 2^30], got %d", c.NextEventRate)
	check(c.FirstEventRate == c.NextEventRate || c.RatePeriodSec >= 1,
		"RatePeriodSec must be >= 1 when FirstEventRate != NextEventRate, got %d", c.RatePeriodSec)
	check(c.PersonProportion >= 1, "PersonProportion must be >= 1, got %d", c.PersonProportion)
	check(c.AuctionProportion >= 1, "AuctionProportion must be >= 1, got %d", c.AuctionProportion)
	check(c.BidProportion >= 0, "BidProportion must be >= 0, got %d", c.BidProportion)
	check(c.PersonProportion <= math.MaxInt32 && c.AuctionProportion <= math.MaxInt32 &&
		c.BidProportion <= math.MaxInt32 &&
		int64(c.PersonProportion)+int64(c.AuctionProportion)+int64(c.BidProportion) <= math.MaxInt32,
		"proportions must sum to at most %d", math.MaxInt32)
	check(c.AvgPersonByteSize >= 0 && c.AvgAuctionByteSize >= 0 && c.AvgBidByteSize >= 0,
		"average byte sizes must be >= 0")
	check(c.AvgPersonByteSize <= math.MaxInt32/2 && c.AvgAuctionByteSize <= math.MaxInt32/2 &&
		c.AvgBidByteSize <= math.MaxInt32/2, "average byte sizes must be <= %d", math.MaxInt32/2)
	check(c.HotAuctionRatio >= 1 && c.HotAuctionRatio <= math.MaxInt32, "HotAuctionRatio must be in [1, 2^31), got %d", c.HotAuctionRatio)
	check(c.HotSellersRatio >= 1 && c.HotSellersRatio <= math.MaxInt32, "HotSellersRatio must be in [1, 2^31), got %d", c.HotSellersRatio)
	check(c.HotBiddersRatio >= 1 && c.HotBiddersRatio <= math.MaxInt32, "HotBiddersRatio must be in [1, 2^31), got %d", c.HotBiddersRatio)
	check(c.NumInFlightAuctions >= 0 && c.NumInFlightAuctions <= math.MaxInt32, "NumInFlightAuctions must be in [0, 2^31), got %d", c.NumInFlightAuctions)
	check(c.NumActivePeople >= 0 && c.NumActivePeople <= math.MaxInt32, "NumActivePeople must be in [0, 2^31), got %d", c.NumActivePeople)
	check(c.OutOfOrderGroupSize >= 1, "OutOfOrderGroupSize must be >= 1, got %d", c.OutOfOrderGroupSize)
	return errors.Join(errs...)
}

// interEventDelayUs ports RateShape.interEventDelayUs(firstRate, nextRate,
// unit, numGenerators): the per-generator inter-event delays in microseconds,
// one per step of the rate curve.
func (c Config) interEventDelayUs() []int64 {
	n := int64(c.NumEventGenerators)
	u := c.RateUnit
	if c.FirstEventRate == c.NextEventRate {
		return []int64{u.rateToPeriodUs(int64(c.FirstEventRate)) * n}
	}
	if c.RateShape == RateShapeSquare {
		return []int64{
			u.rateToPeriodUs(int64(c.FirstEventRate)) * n,
			u.rateToPeriodUs(int64(c.NextEventRate)) * n,
		}
	}
	const steps = 10
	mid := float64(c.FirstEventRate+c.NextEventRate) / 2.0
	amp := float64(c.FirstEventRate-c.NextEventRate) / 2.0 // may be negative
	twoPi := 2.0 * math.Pi
	delays := make([]int64, steps)
	for i := range delays {
		r := (twoPi * float64(i)) / steps
		// The explicit conversion keeps the product rounded on its own, as in
		// Java, rather than fused into a multiply-add.
		rate := mid + float64(amp*math.Cos(r))
		delays[i] = u.rateToPeriodUs(javaRound(rate)) * n
	}
	return delays
}

// stepLengthSec ports RateShape.stepLengthSec: the time each step of the
// rate curve lasts, so that the whole curve takes RatePeriodSec.
func (c Config) stepLengthSec() int64 {
	steps := 10
	if c.RateShape == RateShapeSquare {
		steps = 2
	}
	return int64((c.RatePeriodSec + steps - 1) / steps)
}
