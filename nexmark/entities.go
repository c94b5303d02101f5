package nexmark

import (
	"math"
	"slices"
)

// Ports of Beam's model generators (PersonGenerator, AuctionGenerator,
// BidGenerator, StringsGenerator, LongGenerator). Every random draw happens
// in the same order, with the same bounds, as in the Java code: changing the
// order of any two draws changes every later field.

const (
	personIDLead    = 10  // PersonGenerator.PERSON_ID_LEAD
	auctionIDLead   = 10  // AuctionGenerator.AUCTION_ID_LEAD
	numCategories   = 5   // AuctionGenerator.NUM_CATEGORIES
	hotSellerBatch  = 100 // AuctionGenerator.HOT_SELLER_RATIO
	hotAuctionBatch = 100 // BidGenerator.HOT_AUCTION_RATIO
	hotBidderBatch  = 100 // BidGenerator.HOT_BIDDER_RATIO
	minStringLength = 3   // StringsGenerator.MIN_STRING_LENGTH
)

var (
	usStates   = [...]string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	usCities   = [...]string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	firstNames = [...]string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = [...]string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}

	// fullNames[i*len(lastNames)+j] is firstNames[i] + " " + lastNames[j],
	// precomputed so that person names need no allocation.
	fullNames = func() []string {
		out := make([]string, 0, len(firstNames)*len(lastNames))
		for _, f := range firstNames {
			for _, l := range lastNames {
				out = append(out, f+" "+l)
			}
		}
		return out
	}()
)

// Stack buffers in which an event's random strings are assembled before
// being copied into one heap string. They fit the default average sizes;
// larger events spill to the heap.
const (
	personScratch  = 512
	auctionScratch = 1024
	bidScratch     = 256
)

// nextLong ports LongGenerator.nextLong: a value in [0, n).
func nextLong(r *JavaRandom, n int64) int64 {
	if n < math.MaxInt32 {
		return int64(r.NextIntn(int32(n)))
	}
	v := r.NextLong() % n // very skewed, as in Beam
	if v < 0 {
		v = -v
	}
	return v
}

// appendString ports StringsGenerator.nextString(random, maxLength) (and the
// Flink variant with another filler than ' '): between 3 and maxLength-1
// characters, each a filler with probability 1/13 and otherwise a letter,
// then trimmed of leading and trailing spaces as Java's String.trim does.
func appendString(buf []byte, r *JavaRandom, maxLength int32, filler byte) []byte {
	start := len(buf)
	n := minStringLength + r.NextIntn(maxLength-minStringLength)
	for ; n > 0; n-- {
		if r.NextIntn(13) == 0 {
			buf = append(buf, filler)
		} else {
			buf = append(buf, byte('a'+r.NextIntn(26)))
		}
	}
	if filler > ' ' {
		return buf // trim only removes characters <= ' '
	}
	s, e := start, len(buf)
	for s < e && buf[s] <= ' ' {
		s++
	}
	for e > s && buf[e-1] <= ' ' {
		e--
	}
	copy(buf[start:], buf[s:e])
	return buf[:start+(e-s)]
}

// appendExactString ports StringsGenerator.nextExactString: length
// characters taken six at a time from one random int, base 26. Java's
// truncating % on negative ints yields characters below 'a' ('H' to '`'),
// which this reproduces.
func appendExactString(buf []byte, r *JavaRandom, length int32) []byte {
	start := len(buf)
	buf = slices.Grow(buf, int(length))[:start+int(length)]
	out := buf[start:]
	// Whole groups of six characters, then the rest. Character k is
	// (rnd / 26^k) % 26, and a % 26 is a - (a/26)*26 with truncated
	// division, as in Go and Java.
	for len(out) >= 6 {
		// The quotients by 26^k, each divided from rnd itself, so that the
		// six divisions do not wait on one another ((a/b)/c == a/(b*c)
		// for truncated division).
		rnd := r.NextInt()
		t1, t2, t3 := rnd/26, rnd/(26*26), rnd/(26*26*26)
		t4, t5, t6 := rnd/(26*26*26*26), rnd/(26*26*26*26*26), rnd/(26*26*26*26*26*26)
		o := out[:6:6]
		o[0] = byte('a' + (rnd - t1*26))
		o[1] = byte('a' + (t1 - t2*26))
		o[2] = byte('a' + (t2 - t3*26))
		o[3] = byte('a' + (t3 - t4*26))
		o[4] = byte('a' + (t4 - t5*26))
		o[5] = byte('a' + (t5 - t6*26))
		out = out[6:]
	}
	if len(out) > 0 {
		rnd := r.NextInt()
		for k := range out {
			q := rnd / 26
			out[k] = byte('a' + (rnd - q*26))
			rnd = q
		}
	}
	return buf
}

// appendExtra ports StringsGenerator.nextExtra: a string whose length brings
// currentSize to desiredAverageSize on average (+-20%).
func appendExtra(buf []byte, r *JavaRandom, currentSize, desiredAverageSize int32) []byte {
	if currentSize > desiredAverageSize {
		return buf
	}
	desiredAverageSize -= currentSize
	delta := int32(javaRound(float64(desiredAverageSize) * 0.2))
	minSize := desiredAverageSize - delta
	size := minSize
	if delta != 0 {
		size += r.NextIntn(2 * delta)
	}
	return appendExactString(buf, r, size)
}

// appendFourDigits appends v (0..9999) zero-padded to four digits, like
// String.format("%04d", v).
func appendFourDigits(buf []byte, v int32) []byte {
	return append(buf, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}

// lastBase0PersonID ports PersonGenerator.lastBase0PersonId: the last person
// id (without FirstPersonID) generated at or before eventID.
func (g *Generator) lastBase0PersonID(eventID int64) int64 {
	epoch := eventID / g.totalProp
	offset := eventID % g.totalProp
	if offset >= g.personProp {
		offset = g.personProp - 1
	}
	return epoch*g.personProp + offset
}

// nextBase0PersonID ports PersonGenerator.nextBase0PersonId: a random recent
// person, possibly one of the next few still to be generated.
func (g *Generator) nextBase0PersonID(eventID int64, r *JavaRandom) int64 {
	numPeople := g.lastBase0PersonID(eventID) + 1
	active := min(numPeople, int64(g.cfg.NumActivePeople))
	n := nextLong(r, active+personIDLead)
	return numPeople - active + n
}

// lastBase0AuctionID ports AuctionGenerator.lastBase0AuctionId.
func (g *Generator) lastBase0AuctionID(eventID int64) int64 {
	epoch := eventID / g.totalProp
	offset := eventID % g.totalProp
	switch {
	case offset < g.personProp:
		epoch--
		offset = g.auctionProp - 1
	case offset >= g.personProp+g.auctionProp:
		offset = g.auctionProp - 1
	default:
		offset -= g.personProp
	}
	return epoch*g.auctionProp + offset
}

// nextBase0AuctionID ports AuctionGenerator.nextBase0AuctionId: a random
// auction likely still in flight, possibly one of the next few.
func (g *Generator) nextBase0AuctionID(eventID int64, r *JavaRandom) int64 {
	maxAuction := g.lastBase0AuctionID(eventID)
	minAuction := max(maxAuction-int64(g.cfg.NumInFlightAuctions), 0)
	return minAuction + nextLong(r, maxAuction-minAuction+1+auctionIDLead)
}

// nextPerson ports PersonGenerator.nextPerson.
func (g *Generator) nextPerson(eventID int64, r *JavaRandom, ts int64, p *Person) {
	var scratch [personScratch]byte
	buf := scratch[:0]

	p.ID = g.lastBase0PersonID(eventID) + FirstPersonID
	first := r.NextIntn(int32(len(firstNames)))
	last := r.NextIntn(int32(len(lastNames)))
	name := fullNames[int(first)*len(lastNames)+int(last)]

	buf = appendString(buf, r, 7, ' ')
	buf = append(buf, '@')
	buf = appendString(buf, r, 5, ' ')
	buf = append(buf, ".com"...)
	emailEnd := len(buf)
	for i := 0; i < 4; i++ {
		if i > 0 {
			buf = append(buf, ' ')
		}
		buf = appendFourDigits(buf, r.NextIntn(10000))
	}
	cardEnd := len(buf)
	city := usCities[r.NextIntn(int32(len(usCities)))]
	state := usStates[r.NextIntn(int32(len(usStates)))]
	size := 8 + len(name) + cardEnd + len(city) + len(state)
	buf = appendExtra(buf, r, int32(size), int32(g.cfg.AvgPersonByteSize))

	s := string(buf)
	p.Name = name
	p.EmailAddress = s[:emailEnd]
	p.CreditCard = s[emailEnd:cardEnd]
	p.City = city
	p.State = state
	p.DateTime = ts
	p.Extra = s[cardEnd:]
}

// nextAuction ports AuctionGenerator.nextAuction. adj is the generator's
// adjusted event number for this event (Beam recomputes it from
// eventsCountSoFar).
func (g *Generator) nextAuction(adj, eventID int64, r *JavaRandom, ts int64, a *Auction) {
	var scratch [auctionScratch]byte
	buf := scratch[:0]

	a.ID = g.lastBase0AuctionID(eventID) + FirstAuctionID
	var seller int64
	if r.NextIntn(int32(g.cfg.HotSellersRatio)) > 0 {
		seller = (g.lastBase0PersonID(eventID) / hotSellerBatch) * hotSellerBatch
	} else {
		seller = g.nextBase0PersonID(eventID, r)
	}
	a.Seller = seller + FirstPersonID
	a.Category = FirstCategoryID + int64(r.NextIntn(numCategories))
	a.InitialBid = nextPrice(r)

	// AuctionGenerator.nextAuctionLengthMs: the auction lasts on average
	// until NumInFlightAuctions more auctions have been generated.
	future := g.timestampForEventNumber(adj + g.eventsForAuctions)
	horizonMs := future - ts
	a.Expires = ts + 1 + nextLong(r, max(horizonMs*2, 1))

	buf = appendString(buf, r, 20, ' ')
	nameEnd := len(buf)
	buf = appendString(buf, r, 100, ' ')
	descEnd := len(buf)
	a.Reserve = a.InitialBid + nextPrice(r)
	size := 8 + descEnd + 8 + 8 + 8 + 8 + 8
	buf = appendExtra(buf, r, int32(size), int32(g.cfg.AvgAuctionByteSize))

	s := string(buf)
	a.ItemName = s[:nameEnd]
	a.Description = s[nameEnd:descEnd]
	a.DateTime = ts
	a.Extra = s[descEnd:]
}

// nextBid ports BidGenerator.nextBid, then draws the Flink-style channel and
// URL from the same random sequence (see channel.go).
func (g *Generator) nextBid(eventID int64, r *JavaRandom, ts int64, b *Bid) {
	var scratch [bidScratch]byte
	buf := scratch[:0]

	var auction int64
	if r.NextIntn(int32(g.cfg.HotAuctionRatio)) > 0 {
		auction = (g.lastBase0AuctionID(eventID) / hotAuctionBatch) * hotAuctionBatch
	} else {
		auction = g.nextBase0AuctionID(eventID, r)
	}
	b.Auction = auction + FirstAuctionID

	var bidder int64
	if r.NextIntn(int32(g.cfg.HotBiddersRatio)) > 0 {
		bidder = (g.lastBase0PersonID(eventID)/hotBidderBatch)*hotBidderBatch + 1
	} else {
		bidder = g.nextBase0PersonID(eventID, r)
	}
	b.Bidder = bidder + FirstPersonID

	b.Price = nextPrice(r)
	buf = appendExtra(buf, r, 8+8+8+8, int32(g.cfg.AvgBidByteSize))
	b.Extra = string(buf)
	b.Channel, b.URL = g.tables.next(r)
	b.DateTime = ts
}
