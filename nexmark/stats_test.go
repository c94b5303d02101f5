package nexmark

import (
	"math"
	"os"
	"sort"
	"testing"
)

// Statistical checks on a generated run: the event mix, the shares of hot
// auctions, bidders and sellers, and the price distribution. The run is
// deterministic, so these tests either always pass or always fail; the
// tolerances are wide enough (5 standard deviations) that a correct
// generator passes and narrow enough to catch a wrong ratio or a
// misplaced draw.
//
// The default run has 1,000,000 events; WEIR_NEXMARK_STATS=10m makes it
// 10,000,000.

// statsNumEvents is the size of the run.
func statsNumEvents() int64 {
	if os.Getenv("WEIR_NEXMARK_STATS") == "10m" {
		return 10_000_000
	}
	return 1_000_000
}

// statsTolerance is the number of standard deviations a statistic may be
// off by.
const statsTolerance = 5.0

// binomialSum accumulates successes of trials with varying success
// probabilities: the observed count, the expected count and the binomial
// variance of the count.
type binomialSum struct {
	n           int64
	hits        int64
	mean, varnc float64
}

func (s *binomialSum) add(p float64, hit bool) {
	s.n++
	if hit {
		s.hits++
	}
	s.mean += p
	s.varnc += p * (1 - p)
}

// Allowances, in trials, for decisions taken by the first draw of an
// event's random generator.
//
// Every event's randomness comes from a java.util.Random seeded with the
// event id, and the first draws of generators with consecutive seeds are
// far from independent: the first nextInt(2), which sends a bid to the hot
// auction, comes in runs of several hundred equal values, and the count of
// hot-auction bids among the first N events strays from its expectation by
// up to 5,218 (measured over every N up to 2*10^7) whatever N is, instead
// of by a multiple of the binomial standard deviation. At 10^6 events that
// is more than 5 standard deviations (z = -5.3), at 10^7 well inside
// (z = +0.2). The first nextInt(4) of auction events, which picks the hot
// seller, strays by up to 334 (4.9 standard deviations). Beam's generator
// behaves the same. The allowances cover these bounded discrepancies with
// some margin.
const (
	hotAuctionAllowance = 7000
	hotSellerAllowance  = 500
)

// check fails when the count is further from its expectation than
// statsTolerance binomial standard deviations plus allowance trials.
func (s *binomialSum) check(t *testing.T, what string, nominal float64, allowance float64) {
	t.Helper()
	sd := math.Sqrt(s.varnc)
	d := float64(s.hits) - s.mean
	t.Logf("%s: %d of %d (%.5f; configured %.5f, expected with chance hits %.5f), %+.0f off, z = %+.2f",
		what, s.hits, s.n, float64(s.hits)/float64(s.n), nominal, s.mean/float64(s.n), d, d/sd)
	if math.Abs(d) > statsTolerance*sd+allowance {
		t.Errorf("%s: %d hits, expected %.1f +- %.1f (%.0f standard deviations of %.1f plus %.0f)",
			what, s.hits, s.mean, statsTolerance*sd+allowance, statsTolerance, sd, allowance)
	}
}

// recentPersonChance is the probability that the generator's "random
// recent person" draw for a run with numPeople people so far picks the
// base-0 person id want: the draw is uniform over the last
// min(numPeople, NumActivePeople) people and the next 10 (Beam's
// PERSON_ID_LEAD).
func recentPersonChance(cfg Config, numPeople, want int64) float64 {
	active := min(numPeople, int64(cfg.NumActivePeople))
	lo, hi := numPeople-active, numPeople+10 // [lo, hi)
	if want < lo || want >= hi {
		return 0
	}
	return 1 / float64(hi-lo)
}

// priceBuckets splits log10(price/100) in [0, 6] into buckets of width
// 0.1: lower[k] is the smallest integer price whose log10(price/100) is at
// least k/10.
var priceBuckets = func() []int64 {
	lower := make([]int64, 61)
	for k := range lower {
		lower[k] = int64(math.Ceil(100 * math.Pow(10, float64(k)/10)))
	}
	return lower
}()

// priceBucket returns the bucket of price, or -1 outside [100, 10^8].
func priceBucket(price int64) int {
	if price < 100 || price > 100_000_000 {
		return -1
	}
	k := sort.Search(len(priceBuckets), func(k int) bool { return priceBuckets[k] > price }) - 1
	return min(k, 59) // 10^8 itself, log 6, joins the last bucket
}

// priceBucketProbs returns the probability of each bucket when prices are
// round(10^(6u) * 100) for u uniform on [0, 1): price P is drawn when
// 10^(6u) * 100 lies in [P - 0.5, P + 0.5), that is when
// u in [log10((P-0.5)/100)/6, log10((P+0.5)/100)/6) clipped to [0, 1).
func priceBucketProbs() []float64 {
	cdf := func(x float64) float64 { // P(10^(6u) * 100 < x)
		return min(max(math.Log10(x/100)/6, 0), 1)
	}
	probs := make([]float64, 60)
	for k := range probs {
		hi := float64(priceBuckets[k+1]) - 0.5
		if k == 59 {
			hi = math.Inf(1)
		}
		probs[k] = cdf(hi) - cdf(float64(priceBuckets[k])-0.5)
	}
	return probs
}

// priceHistogram counts prices per bucket.
type priceHistogram struct {
	counts  [60]int64
	n       int64
	logSum  float64
	outside int64
}

func (h *priceHistogram) add(price int64) {
	k := priceBucket(price)
	if k < 0 {
		h.outside++
		return
	}
	h.counts[k]++
	h.n++
	h.logSum += math.Log10(float64(price) / 100)
}

// check runs a chi-square test of the buckets against the exact bucket
// probabilities and checks that the mean of log10(price/100) is 3, as for
// a uniform distribution on [0, 6].
func (h *priceHistogram) check(t *testing.T, what string) {
	t.Helper()
	if h.outside > 0 {
		t.Errorf("%s: %d prices outside [100, 10^8]", what, h.outside)
	}
	// Only too large a chi-square fails. Bid prices fit far better than
	// chance (chi-square about 5 on 59 degrees of freedom): the seeds of
	// consecutive events spread their draws more evenly than independent
	// ones would.
	probs := priceBucketProbs()
	chi2 := 0.0
	for k, p := range probs {
		e := p * float64(h.n)
		d := float64(h.counts[k]) - e
		chi2 += d * d / e
	}
	// Wilson-Hilferty: (chi2/df)^(1/3) is about normal with mean
	// 1 - 2/(9 df) and variance 2/(9 df).
	df := float64(len(probs) - 1)
	z := (math.Cbrt(chi2/df) - (1 - 2/(9*df))) / math.Sqrt(2/(9*df))
	mean := h.logSum / float64(h.n)
	meanZ := (mean - 3) / (math.Sqrt(3) / math.Sqrt(float64(h.n))) // sd of U[0,6] is sqrt(3)
	t.Logf("%s: %d prices, chi-square %.1f on %.0f degrees of freedom (z = %+.2f); mean log10(price/100) %.5f (z = %+.2f)",
		what, h.n, chi2, df, z, mean, meanZ)
	if z > statsTolerance {
		t.Errorf("%s: log10(price/100) is not uniform on [0, 6]: chi-square %.1f on %.0f degrees of freedom", what, chi2, df)
	}
	if math.Abs(meanZ) > statsTolerance {
		t.Errorf("%s: mean log10(price/100) = %.5f, want 3 within %.5f", what, mean, statsTolerance*math.Sqrt(3/float64(h.n)))
	}
}

func TestGeneratedStatistics(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumEvents = statsNumEvents()
	// The unsplit generator: event i has id i, so the formulas below can
	// work from i.
	g, err := NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	persons, auctions := int64(cfg.PersonProportion), int64(cfg.AuctionProportion)
	total := persons + auctions + int64(cfg.BidProportion)
	if cfg.NumEvents%total != 0 {
		t.Fatalf("%d events are not whole blocks of %d", cfg.NumEvents, total)
	}
	const hotBatch = 100 // Beam's HOT_AUCTION_RATIO, HOT_BIDDER_RATIO, HOT_SELLER_RATIO
	pHotAuction := 1 - 1/float64(cfg.HotAuctionRatio)
	pHotBidder := 1 - 1/float64(cfg.HotBiddersRatio)
	pHotSeller := 1 - 1/float64(cfg.HotSellersRatio)

	var hotAuction, hotBidder, hotSeller binomialSum
	var bidPrices, initialBids, reserveMargins priceHistogram
	var block [3]int64
	var e Event
	for i := range cfg.NumEvents {
		g.EventAt(i, &e)
		if id := g.EventID(i); id != i {
			t.Fatalf("event %d has id %d", i, id)
		}
		block[e.Kind]++
		if (i+1)%total == 0 {
			if block != [3]int64{persons, auctions, int64(cfg.BidProportion)} {
				t.Fatalf("events %d to %d: %d people, %d auctions, %d bids; want %d/%d/%d",
					i+1-total, i, block[0], block[1], block[2], persons, auctions, cfg.BidProportion)
			}
			block = [3]int64{}
		}

		// Entities generated so far, counting this event: the people and
		// auctions of the whole blocks before this one, plus those of
		// this block up to this event (people come first in a block, then
		// auctions, then bids).
		epoch, offset := i/total, i%total
		numPeople := epoch*persons + min(offset+1, persons)
		numAuctions := epoch*auctions + min(max(offset+1-persons, 0), auctions)

		switch e.Kind {
		case AuctionEvent:
			// A hot seller is the first person of the current batch of
			// 100; otherwise a random recent person, which may also be
			// the hot one.
			hot := (numPeople - 1) / hotBatch * hotBatch
			p := pHotSeller + (1-pHotSeller)*recentPersonChance(cfg, numPeople, hot)
			hotSeller.add(p, e.Auction.Seller == hot+FirstPersonID)
			initialBids.add(e.Auction.InitialBid)
			reserveMargins.add(e.Auction.Reserve - e.Auction.InitialBid)
		case BidEvent:
			// A hot auction is the first auction of the current batch of
			// 100; otherwise an auction drawn uniformly from the last
			// NumInFlightAuctions+1 and the next 10.
			last := numAuctions - 1
			hot := last / hotBatch * hotBatch
			lo := max(last-int64(cfg.NumInFlightAuctions), 0)
			p := pHotAuction + (1-pHotAuction)/float64(last-lo+1+10)
			hotAuction.add(p, e.Bid.Auction == hot+FirstAuctionID)
			// A hot bidder is the second person of the current batch.
			hotB := (numPeople-1)/hotBatch*hotBatch + 1
			p = pHotBidder + (1-pHotBidder)*recentPersonChance(cfg, numPeople, hotB)
			hotBidder.add(p, e.Bid.Bidder == hotB+FirstPersonID)
			bidPrices.add(e.Bid.Price)
		}
	}
	// The hot auction and the hot seller are decided by the event's first
	// draw, the hot bidder by a later one.
	hotAuction.check(t, "bids on the hot auction", pHotAuction, hotAuctionAllowance)
	hotBidder.check(t, "bids by the hot bidder", pHotBidder, 0)
	hotSeller.check(t, "auctions by the hot seller", pHotSeller, hotSellerAllowance)
	bidPrices.check(t, "bid prices")
	initialBids.check(t, "initial bids")
	reserveMargins.check(t, "reserve - initial bid")
}
