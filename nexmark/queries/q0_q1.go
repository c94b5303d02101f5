package queries

import (
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// BidRow is a bid's columns, the output of q0 and q1.
type BidRow struct {
	Auction  int64   `json:"auction"`
	Bidder   int64   `json:"bidder"`
	Price    float64 `json:"price"`
	DateTime int64   `json:"dateTime"`
	Extra    string  `json:"extra"`
}

// Bids returns the bids of an event stream.
func Bids(in weir.Stream[nexmark.Event]) weir.Stream[nexmark.Bid] {
	return weir.FlatMap(in, func(e nexmark.Event, emit func(nexmark.Bid)) {
		if e.Kind == nexmark.BidEvent {
			emit(e.Bid)
		}
	}, weir.Name("bids"))
}

func init() {
	Register(Query{Name: "q0", Description: "pass-through: every bid's columns", Build: func(in weir.Stream[nexmark.Event], out Output) {
		Emit(weir.Map(Bids(in), func(b nexmark.Bid) BidRow {
			return BidRow{b.Auction, b.Bidder, float64(b.Price), b.DateTime, b.Extra}
		}, weir.Name("q0")), out)
	}})
	Register(Query{Name: "q1", Description: "currency conversion: bid prices from dollars to euros (x 0.908)", Build: func(in weir.Stream[nexmark.Event], out Output) {
		Emit(weir.Map(Bids(in), func(b nexmark.Bid) BidRow {
			return BidRow{b.Auction, b.Bidder, 0.908 * float64(b.Price), b.DateTime, b.Extra}
		}, weir.Name("q1")), out)
	}})
}
