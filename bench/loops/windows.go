package loops

import (
	"iter"
	"slices"
	"sort"

	"github.com/weir-stream/weir/nexmark"
	"github.com/weir-stream/weir/nexmark/queries"
)

func init() {
	register("q5", q5)
	register("q7", q7)
	register("q8", q8)
	register("q11", q11)
	register("q12", q12)
}

// q5 counts bids per auction in 10 s windows sliding by 2 s and, as each
// window closes, writes the auctions with the most bids.
func q5(events iter.Seq[*nexmark.Event], emit func(queries.Q5Row)) {
	const size, slide = 10_000, 2_000
	windows := map[int64]map[int64]int64{} // start -> auction -> bids
	var open []int64                       // starts of windows, ascending
	fire := func(start int64) {
		counts := windows[start]
		var maxN int64
		for _, n := range counts {
			maxN = max(maxN, n)
		}
		for a, n := range counts {
			if n == maxN {
				emit(queries.Q5Row{Auction: a, Num: n})
			}
		}
		delete(windows, start)
	}
	for e := range events {
		now := e.DateTime()
		for len(open) > 0 && open[0]+size <= now {
			fire(open[0])
			open = open[1:]
		}
		if e.Kind != nexmark.BidEvent {
			continue
		}
		last := now - now%slide
		for start := last - size + slide; start <= last; start += slide {
			w := windows[start]
			if w == nil {
				w = map[int64]int64{}
				windows[start] = w
				open = append(open, start)
				slices.Sort(open)
			}
			w[e.Bid.Auction]++
		}
	}
	for _, start := range open {
		fire(start)
	}
}

// q7 finds the highest price of each 10 s tumbling window and writes the
// window's bids at that price, and the bids made at exactly the window's
// end at that price, once the window's end has passed.
func q7(events iter.Seq[*nexmark.Event], emit func(queries.Q7Row)) {
	const size = 10_000
	type window struct {
		set      bool
		max      int64
		bids     []queries.Q7Row
		boundary []queries.Q7Row
	}
	windows := map[int64]*window{}
	var open []int64 // starts of windows, ascending
	get := func(start int64) *window {
		w := windows[start]
		if w == nil {
			w = &window{}
			windows[start] = w
			open = append(open, start)
			slices.Sort(open)
		}
		return w
	}
	fire := func(start int64) {
		w := windows[start]
		delete(windows, start)
		if !w.set {
			return
		}
		for _, r := range w.bids {
			emit(r)
		}
		for _, r := range w.boundary {
			if r.Price == w.max {
				emit(r)
			}
		}
	}
	for e := range events {
		now := e.DateTime()
		// A window closes after its end: bids at the end itself still count.
		for len(open) > 0 && open[0]+size < now {
			fire(open[0])
			open = open[1:]
		}
		if e.Kind != nexmark.BidEvent {
			continue
		}
		b := &e.Bid
		r := queries.Q7Row{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, DateTime: b.DateTime, Extra: b.Extra}
		w := get(now - now%size)
		switch {
		case !w.set || b.Price > w.max:
			w.set, w.max, w.bids = true, b.Price, append(w.bids[:0], r)
		case b.Price == w.max:
			w.bids = append(w.bids, r)
		}
		if now%size == 0 {
			p := get(now - size)
			p.boundary = append(p.boundary, r)
		}
	}
	for _, s := range open {
		fire(s)
	}
}

// q8 groups people and sellers by id in 10 s tumbling windows and writes
// the people who also opened an auction in the window.
func q8(events iter.Seq[*nexmark.Event], emit func(queries.Q8Row)) {
	const size = 10_000
	type acc struct {
		names   []string
		auction bool
	}
	cur := int64(-1)
	group := map[int64]*acc{}
	fire := func() {
		for id, a := range group {
			if a.auction {
				for _, n := range a.names {
					emit(queries.Q8Row{ID: id, Name: n, STime: cur})
				}
			}
		}
		clear(group)
	}
	for e := range events {
		if e.Kind == nexmark.BidEvent {
			continue
		}
		now := e.DateTime()
		if start := now - now%size; start != cur {
			fire()
			cur = start
		}
		if e.Kind == nexmark.PersonEvent {
			a := group[e.Person.ID]
			if a == nil {
				a = &acc{}
				group[e.Person.ID] = a
			}
			if !slices.Contains(a.names, e.Person.Name) {
				a.names = append(a.names, e.Person.Name)
			}
		} else {
			a := group[e.Auction.Seller]
			if a == nil {
				a = &acc{}
				group[e.Auction.Seller] = a
			}
			a.auction = true
		}
	}
	fire()
}

// q11 counts each bidder's bids per session (bids at most 10 s apart),
// writing a session once 10 s have passed since its last bid.
func q11(events iter.Seq[*nexmark.Event], emit func(queries.Q11Row)) {
	const gap = 10_000
	type session struct{ start, last, count int64 }
	type deadline struct{ bidder, end int64 }
	sessions := map[int64]*session{}
	// Ends in the order they were set, which is time order; an entry is
	// stale if its session was extended since.
	var queue []deadline
	for e := range events {
		now := e.DateTime()
		for len(queue) > 0 && queue[0].end < now {
			d := queue[0]
			queue = queue[1:]
			if s := sessions[d.bidder]; s != nil && s.last+gap == d.end {
				emit(queries.Q11Row{Bidder: d.bidder, BidCount: s.count, StartTime: s.start, EndTime: d.end})
				delete(sessions, d.bidder)
			}
		}
		if e.Kind != nexmark.BidEvent {
			continue
		}
		s := sessions[e.Bid.Bidder]
		if s == nil {
			s = &session{start: now}
			sessions[e.Bid.Bidder] = s
		}
		s.last = now
		s.count++
		queue = append(queue, deadline{e.Bid.Bidder, now + gap})
	}
	rest := make([]int64, 0, len(sessions))
	for b := range sessions {
		rest = append(rest, b)
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i] < rest[j] })
	for _, b := range rest {
		s := sessions[b]
		emit(queries.Q11Row{Bidder: b, BidCount: s.count, StartTime: s.start, EndTime: s.last + gap})
	}
}

// q12 counts each bidder's bids per 10 s tumbling window of event time.
func q12(events iter.Seq[*nexmark.Event], emit func(queries.Q12Row)) {
	const size = 10_000
	cur := int64(-1)
	counts := map[int64]int64{}
	fire := func() {
		for b, n := range counts {
			emit(queries.Q12Row{Bidder: b, BidCount: n, StartTime: cur, EndTime: cur + size})
		}
		clear(counts)
	}
	for e := range events {
		if e.Kind != nexmark.BidEvent {
			continue
		}
		now := e.DateTime()
		if start := now - now%size; start != cur {
			fire()
			cur = start
		}
		counts[e.Bid.Bidder]++
	}
	fire()
}
