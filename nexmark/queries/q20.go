package queries

import (
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q20Row is a row of q20, a bid joined with its auction when the auction is
// of category 10, the Nexmark SQL
//
//	SELECT auction, bidder, price, channel, url, B.dateTime, B.extra,
//	       itemName, description, initialBid, reserve, A.dateTime, expires,
//	       seller, category, A.extra
//	FROM bid AS B INNER JOIN auction AS A ON B.auction = A.id
//	WHERE A.category = 10;
//
// with the column names of the SQL's sink table (bid_dateTime, bid_extra,
// auction_dateTime, auction_extra). The join is unbounded, as in the SQL:
// a bid that arrives before its auction waits for it. Both inputs are
// append-only and every auction id occurs once, so the result is
// append-only too and is written without a changelog op.
type Q20Row struct {
	Auction         int64  `json:"auction"`
	Bidder          int64  `json:"bidder"`
	Price           int64  `json:"price"`
	Channel         string `json:"channel"`
	URL             string `json:"url"`
	BidDateTime     int64  `json:"bid_dateTime"`
	BidExtra        string `json:"bid_extra"`
	ItemName        string `json:"itemName"`
	Description     string `json:"description"`
	InitialBid      int64  `json:"initialBid"`
	Reserve         int64  `json:"reserve"`
	AuctionDateTime int64  `json:"auction_dateTime"`
	Expires         int64  `json:"expires"`
	Seller          int64  `json:"seller"`
	Category        int64  `json:"category"`
	AuctionExtra    string `json:"auction_extra"`
}

// q20Category is the category q20 keeps.
const q20Category = 10

func q20Join(b nexmark.Bid, a nexmark.Auction) Q20Row {
	return Q20Row{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel, URL: b.URL,
		BidDateTime: b.DateTime, BidExtra: b.Extra, ItemName: a.ItemName, Description: a.Description,
		InitialBid: a.InitialBid, Reserve: a.Reserve, AuctionDateTime: a.DateTime, Expires: a.Expires,
		Seller: a.Seller, Category: a.Category, AuctionExtra: a.Extra}
}

// q20Fn joins per auction id. auction holds the auction once it has come:
// the whole auction for category 10, only its category otherwise, so that
// later bids on it are dropped at once. pending holds the bids that came
// before their auction. With a state time-to-live (Options.StateTTL) an
// auction is forgotten that long after it came, and a bid that long
// after it was put in pending: later bids on the auction, and a bid
// whose auction comes later, write no row.
type q20Fn struct {
	ttl     time.Duration
	auction *weir.ValueState[nexmark.Auction, int64]
	pending *weir.ListState[nexmark.Bid, int64]
}

func (f *q20Fn) Open(sc *weir.StateContext[int64]) error {
	var opts []weir.StateOption
	if f.ttl > 0 {
		opts = append(opts, weir.StateTTL(f.ttl))
	}
	f.auction = weir.NewValueState[nexmark.Auction](sc, "auction", opts...)
	f.pending = weir.NewListState[nexmark.Bid](sc, "pending", opts...)
	return nil
}

// q20Input is a bid or (IsAuction) an auction for q20's join, keyed by
// auction id. An auction not of category 10 carries only its id and
// category.
type q20Input struct {
	IsAuction bool
	Bid       nexmark.Bid
	Auction   nexmark.Auction
}

func (f *q20Fn) ProcessElement(ctx *weir.KeyedContext[int64, Q20Row], in q20Input) error {
	if in.IsAuction {
		return f.auctionCame(ctx, in.Auction)
	}
	return f.bidCame(ctx, in.Bid)
}

func (f *q20Fn) bidCame(ctx *weir.KeyedContext[int64, Q20Row], b nexmark.Bid) error {
	a, ok := f.auction.Value()
	switch {
	case !ok:
		f.pending.Add(b)
	case a.Category == q20Category:
		ctx.Emit(q20Join(b, a))
	}
	return nil
}

func (f *q20Fn) auctionCame(ctx *weir.KeyedContext[int64, Q20Row], a nexmark.Auction) error {
	if a.Category != q20Category {
		f.auction.Update(nexmark.Auction{Category: a.Category})
		f.pending.Clear()
		return nil
	}
	f.auction.Update(a)
	for _, b := range f.pending.Get() {
		ctx.Emit(q20Join(b, a))
	}
	f.pending.Clear()
	return nil
}

func init() {
	Register(Query{Name: "q20", Description: "bids joined with their auction, for auctions of category 10 (unbounded join)",
		Build: func(in weir.Stream[nexmark.Event], out Output) { q20(in, out, Options{}) },
		Tuned: q20})
}

func q20(in weir.Stream[nexmark.Event], out Output, o Options) {
	// One projection of both sides, chained to the source, and one
	// exchange: two FlatMaps on the source would each be fed the whole
	// encoded event (the planner chains only linear paths).
	inputs := weir.FlatMap(in, func(e nexmark.Event, emit func(q20Input)) {
		switch e.Kind {
		case nexmark.AuctionEvent:
			a := e.Auction
			if a.Category != q20Category {
				a = nexmark.Auction{ID: a.ID, Category: a.Category}
			}
			emit(q20Input{IsAuction: true, Auction: a})
		case nexmark.BidEvent:
			emit(q20Input{Bid: e.Bid})
		}
	}, weir.Name("q20-auctions-bids"))
	keyed := weir.KeyBy(inputs, func(i q20Input) int64 {
		if i.IsAuction {
			return i.Auction.ID
		}
		return i.Bid.Auction
	})
	Emit(weir.Process(keyed, func() weir.KeyedProcessFunction[int64, q20Input, Q20Row] {
		return &q20Fn{ttl: o.StateTTL}
	}, weir.Name("q20")), out)
}
