package loops

import (
	"container/heap"
	"iter"

	"github.com/weir-stream/weir/nexmark"
	"github.com/weir-stream/weir/nexmark/queries"
)

func init() {
	register("q3", q3)
	register("q4", q4)
	register("q20", q20)
}

// q3 joins category-10 auctions with their sellers from OR, ID or CA, both
// sides kept forever (a regular join).
func q3(events iter.Seq[*nexmark.Event], emit func(queries.Q3Row)) {
	type person struct{ name, city, state string }
	persons := map[int64][]person{}
	auctions := map[int64][]int64{} // seller -> auction ids
	for e := range events {
		switch e.Kind {
		case nexmark.PersonEvent:
			p := &e.Person
			if p.State != "OR" && p.State != "ID" && p.State != "CA" {
				continue
			}
			for _, id := range auctions[p.ID] {
				emit(queries.Q3Row{Name: p.Name, City: p.City, State: p.State, ID: id})
			}
			persons[p.ID] = append(persons[p.ID], person{p.Name, p.City, p.State})
		case nexmark.AuctionEvent:
			a := &e.Auction
			if a.Category != 10 {
				continue
			}
			for _, p := range persons[a.Seller] {
				emit(queries.Q3Row{Name: p.name, City: p.city, State: p.state, ID: a.ID})
			}
			auctions[a.Seller] = append(auctions[a.Seller], a.ID)
		}
	}
}

// q4 keeps each auction until it expires with its highest bid in
// [dateTime, expires], and per category the sum and count of those highest
// bids, writing the changelog of each category's average.
func q4(events iter.Seq[*nexmark.Event], emit func(queries.Q4Row)) {
	type auction struct {
		category, start, expires, max int64
		hasMax                        bool
	}
	type bid struct{ auction, price, dateTime int64 }
	type sum struct{ sum, count int64 }
	auctions := map[int64]*auction{}
	var expiries expiryHeap
	// Bids on auctions not seen yet: they can only match an auction with
	// the same timestamp, which arrives before time moves on.
	var pending []bid
	pendingAt := int64(-1)
	sums := map[int64]*sum{}
	fold := func(a *auction, b bid) {
		if b.dateTime < a.start || b.dateTime > a.expires || a.hasMax && b.price <= a.max {
			return
		}
		s := sums[a.category]
		if s == nil {
			s = &sum{}
			sums[a.category] = s
		}
		before := *s
		if a.hasMax {
			s.sum += b.price - a.max
		} else {
			s.sum += b.price
			s.count++
		}
		a.max, a.hasMax = b.price, true
		switch {
		case before.count == 0:
			emit(queries.Q4Row{Op: queries.Insert, ID: a.category, Final: s.sum / s.count})
		case before.sum/before.count != s.sum/s.count:
			emit(queries.Q4Row{Op: queries.UpdateBefore, ID: a.category, Final: before.sum / before.count})
			emit(queries.Q4Row{Op: queries.UpdateAfter, ID: a.category, Final: s.sum / s.count})
		}
	}
	for e := range events {
		now := e.DateTime()
		if now > pendingAt {
			pending = pending[:0]
		}
		for len(expiries) > 0 && expiries[0].at < now {
			delete(auctions, heap.Pop(&expiries).(expiry).id)
		}
		switch e.Kind {
		case nexmark.AuctionEvent:
			a := &auction{category: e.Auction.Category, start: e.Auction.DateTime, expires: e.Auction.Expires}
			auctions[e.Auction.ID] = a
			heap.Push(&expiries, expiry{a.expires, e.Auction.ID})
			for _, b := range pending {
				if b.auction == e.Auction.ID {
					fold(a, b)
				}
			}
		case nexmark.BidEvent:
			b := bid{e.Bid.Auction, e.Bid.Price, e.Bid.DateTime}
			if a := auctions[b.auction]; a != nil {
				fold(a, b)
			} else {
				pending, pendingAt = append(pending, b), now
			}
		}
	}
}

// expiry is an auction id and the time after which it is dropped.
type expiry struct{ at, id int64 }

type expiryHeap []expiry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// q20 joins bids with their auction when it is of category 10; bids that
// come before their auction wait for it.
func q20(events iter.Seq[*nexmark.Event], emit func(queries.Q20Row)) {
	auctions := map[int64]nexmark.Auction{} // category 10: the auction; otherwise only its category
	pending := map[int64][]nexmark.Bid{}
	join := func(b *nexmark.Bid, a *nexmark.Auction) queries.Q20Row {
		return queries.Q20Row{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel, URL: b.URL,
			BidDateTime: b.DateTime, BidExtra: b.Extra, ItemName: a.ItemName, Description: a.Description,
			InitialBid: a.InitialBid, Reserve: a.Reserve, AuctionDateTime: a.DateTime, Expires: a.Expires,
			Seller: a.Seller, Category: a.Category, AuctionExtra: a.Extra}
	}
	for e := range events {
		switch e.Kind {
		case nexmark.AuctionEvent:
			a := &e.Auction
			if a.Category != 10 {
				auctions[a.ID] = nexmark.Auction{Category: a.Category}
				delete(pending, a.ID)
				continue
			}
			auctions[a.ID] = *a
			for i := range pending[a.ID] {
				emit(join(&pending[a.ID][i], a))
			}
			delete(pending, a.ID)
		case nexmark.BidEvent:
			b := &e.Bid
			a, ok := auctions[b.Auction]
			switch {
			case !ok:
				pending[b.Auction] = append(pending[b.Auction], *b)
			case a.Category == 10:
				emit(join(b, &a))
			}
		}
	}
}
