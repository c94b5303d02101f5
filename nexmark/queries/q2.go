package queries

import (
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q2Row is a row of q2, the Nexmark selection query:
//
//	SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0;
//
// price is in cents, a BIGINT as in the SQL.
type Q2Row struct {
	Auction int64 `json:"auction"`
	Price   int64 `json:"price"`
}

func init() {
	Register(Query{Name: "q2", Description: "selection: the auction and price of bids on every 123rd auction", Build: func(in weir.Stream[nexmark.Event], out Output) {
		Emit(weir.FlatMap(in, func(e nexmark.Event, emit func(Q2Row)) {
			if e.Kind == nexmark.BidEvent && e.Bid.Auction%123 == 0 {
				emit(Q2Row{e.Bid.Auction, e.Bid.Price})
			}
		}, weir.Name("q2")), out)
	}})
}
