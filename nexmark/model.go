package nexmark

import "fmt"

// Person is a new person registering with the auction site. Field names
// follow the Nexmark SQL schema (id, name, emailAddress, creditCard, city,
// state, dateTime, extra).
type Person struct {
	ID           int64
	Name         string
	EmailAddress string
	CreditCard   string
	City         string
	State        string
	// DateTime is the event time, in epoch milliseconds.
	DateTime int64
	// Extra is padding towards Config.AvgPersonByteSize.
	Extra string
}

// Auction is a new item put up for auction. Field names follow the Nexmark
// SQL schema (id, itemName, description, initialBid, reserve, dateTime,
// expires, seller, category, extra).
type Auction struct {
	ID          int64
	ItemName    string
	Description string
	// InitialBid and Reserve are prices in cents.
	InitialBid int64
	Reserve    int64
	// DateTime is the event time and Expires the end of the auction, both in
	// epoch milliseconds.
	DateTime int64
	Expires  int64
	// Seller is a Person.ID.
	Seller   int64
	Category int64
	// Extra is padding towards Config.AvgAuctionByteSize.
	Extra string
}

// Bid is a bid on an auction. Field names follow the Nexmark SQL schema
// (auction, bidder, price, channel, url, dateTime, extra).
type Bid struct {
	// Auction is an Auction.ID and Bidder a Person.ID.
	Auction int64
	Bidder  int64
	// Price is in cents.
	Price int64
	// Channel and URL are the sales channel and referring URL, as in the
	// Flink nexmark benchmark (Beam's generator has no such fields).
	Channel string
	URL     string
	// DateTime is the event time, in epoch milliseconds.
	DateTime int64
	// Extra is padding towards Config.AvgBidByteSize.
	Extra string
}

// EventKind tells which entity an Event carries. The numbering matches the
// event_type column of the Flink nexmark schema.
type EventKind uint8

const (
	// PersonEvent: Event.Person is set.
	PersonEvent EventKind = 0
	// AuctionEvent: Event.Auction is set.
	AuctionEvent EventKind = 1
	// BidEvent: Event.Bid is set.
	BidEvent EventKind = 2
)

// String returns "person", "auction" or "bid", the JSON "type" value.
func (k EventKind) String() string {
	switch k {
	case PersonEvent:
		return "person"
	case AuctionEvent:
		return "auction"
	case BidEvent:
		return "bid"
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is one generated event. It holds all three entities by value so that
// generating into a reused Event allocates no entity structs; only the
// member named by Kind is meaningful, and the generator leaves the other two
// zeroed, so Events compare with ==.
type Event struct {
	Kind    EventKind
	Person  Person
	Auction Auction
	Bid     Bid
}

// DateTime returns the event time of the entity the event carries, in epoch
// milliseconds.
func (e *Event) DateTime() int64 {
	switch e.Kind {
	case PersonEvent:
		return e.Person.DateTime
	case AuctionEvent:
		return e.Auction.DateTime
	default:
		return e.Bid.DateTime
	}
}
