package loops

import (
	"iter"

	"github.com/weir-stream/weir/nexmark"
	"github.com/weir-stream/weir/nexmark/queries"
)

func init() {
	register("q0", func(events iter.Seq[*nexmark.Event], emit func(queries.BidRow)) {
		for e := range events {
			if e.Kind == nexmark.BidEvent {
				b := &e.Bid
				emit(queries.BidRow{Auction: b.Auction, Bidder: b.Bidder, Price: float64(b.Price), DateTime: b.DateTime, Extra: b.Extra})
			}
		}
	})
	register("q1", func(events iter.Seq[*nexmark.Event], emit func(queries.BidRow)) {
		for e := range events {
			if e.Kind == nexmark.BidEvent {
				b := &e.Bid
				emit(queries.BidRow{Auction: b.Auction, Bidder: b.Bidder, Price: 0.908 * float64(b.Price), DateTime: b.DateTime, Extra: b.Extra})
			}
		}
	})
	register("q2", func(events iter.Seq[*nexmark.Event], emit func(queries.Q2Row)) {
		for e := range events {
			if e.Kind == nexmark.BidEvent && e.Bid.Auction%123 == 0 {
				emit(queries.Q2Row{Auction: e.Bid.Auction, Price: e.Bid.Price})
			}
		}
	})
}
