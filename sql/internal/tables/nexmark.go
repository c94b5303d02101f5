package tables

import (
	"fmt"
	"github.com/weir-stream/weir/connector"
	"math"
	"strconv"
	"strings"

	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
	"github.com/weir-stream/weir/nexmark"
)

var nexmarkSpec = &spec{
	Connector: Connector{
		Name: "nexmark",
		Doc: "The Nexmark benchmark's event generator (package nexmark), with the schema of the Flink nexmark " +
			"connector: event_type INT, person ROW<...>, auction ROW<...>, bid ROW<...>.",
		Source: true,
		Options: []Option{
			{Name: "first-event.rate", Default: "10000", Doc: "events per second at the start of the rate curve; sets event times, not the speed of generation"},
			{Name: "next-event.rate", Default: "10000", Doc: "events per second the rate curve moves to (equal to first-event.rate: a constant rate)"},
			{Name: "events.num", Default: "0", Doc: "number of events; 0 means unbounded"},
			{Name: "person.proportion", Default: "1", Doc: "relative frequency of person events"},
			{Name: "auction.proportion", Default: "3", Doc: "relative frequency of auction events"},
			{Name: "bid.proportion", Default: "46", Doc: "relative frequency of bid events"},
			{Name: "generators", Default: strconv.Itoa(nexmark.DefaultConfig().NumEventGenerators), Doc: "number of generators the event space is split into, as `weir run nexmark --generators` (the events do not depend on the parallelism)"},
			{Name: "rate", Default: "0", Doc: "generate at most this many events per second of wall-clock time in all (0: as fast as possible); weir's own option, as `weir run nexmark --rate`"},
			{Name: "base-time", Default: strconv.FormatInt(nexmark.DefaultBaseTime, 10), Doc: "event time of the first event, epoch milliseconds"},
		},
	},
	source: func(t Table, o options, cols []int) (Source, error) { return nexmarkSource(t, o, cols, Where{Col: -1}) },
	where:  nexmarkSource,
	// nexmarkSource skips the events of other kinds on event_type.
	narrows: func(t Table, col int) bool {
		c := t.Columns[col]
		return !c.Virtual && c.Metadata == "" && strings.EqualFold(c.Name(), "event_type")
	},
}

// nexmarkConfig maps the table's options onto a nexmark.Config.
func nexmarkConfig(o options) (nexmark.Config, error) {
	cfg := nexmark.DefaultConfig()
	var err error
	get := func(name string, lo, hi int64) int64 {
		if err != nil {
			return 0
		}
		var v int64
		v, err = o.int(name, lo, hi)
		return v
	}
	cfg.FirstEventRate = int(get("first-event.rate", 1, 1<<30))
	cfg.NextEventRate = int(get("next-event.rate", 1, 1<<30))
	cfg.NumEvents = get("events.num", 0, math.MaxInt64)
	cfg.PersonProportion = int(get("person.proportion", 1, math.MaxInt32))
	cfg.AuctionProportion = int(get("auction.proportion", 1, math.MaxInt32))
	cfg.BidProportion = int(get("bid.proportion", 0, math.MaxInt32))
	cfg.NumEventGenerators = int(get("generators", 1, 1<<20))
	cfg.BaseTime = get("base-time", 0, math.MaxInt64/2)
	if err != nil {
		return cfg, err
	}
	if verr := cfg.Validate(); verr != nil {
		return cfg, fmt.Errorf("table %s: %w: %v", o.table, ErrOption, verr)
	}
	return cfg, nil
}

// nexmarkField is one leaf of the nexmark schema.
type nexmarkField struct {
	kind types.Kind
	// of is the event kind whose rows have the field; -1 for event_type,
	// which every row has.
	of  int
	get func(e *nexmark.Event) row.Value
}

// nexmarkFields maps a lower-case path ("person.id") to its field.
var nexmarkFields = map[string]nexmarkField{
	"event_type": {types.Int, -1, func(e *nexmark.Event) row.Value { return row.Int(int32(e.Kind)) }},

	"person.id":           {types.BigInt, 0, func(e *nexmark.Event) row.Value { return row.BigInt(e.Person.ID) }},
	"person.name":         {types.Varchar, 0, func(e *nexmark.Event) row.Value { return row.String(e.Person.Name) }},
	"person.emailaddress": {types.Varchar, 0, func(e *nexmark.Event) row.Value { return row.String(e.Person.EmailAddress) }},
	"person.creditcard":   {types.Varchar, 0, func(e *nexmark.Event) row.Value { return row.String(e.Person.CreditCard) }},
	"person.city":         {types.Varchar, 0, func(e *nexmark.Event) row.Value { return row.String(e.Person.City) }},
	"person.state":        {types.Varchar, 0, func(e *nexmark.Event) row.Value { return row.String(e.Person.State) }},
	"person.datetime":     {types.Timestamp, 0, func(e *nexmark.Event) row.Value { return row.Timestamp(e.Person.DateTime) }},
	"person.extra":        {types.Varchar, 0, func(e *nexmark.Event) row.Value { return row.String(e.Person.Extra) }},

	"auction.id":          {types.BigInt, 1, func(e *nexmark.Event) row.Value { return row.BigInt(e.Auction.ID) }},
	"auction.itemname":    {types.Varchar, 1, func(e *nexmark.Event) row.Value { return row.String(e.Auction.ItemName) }},
	"auction.description": {types.Varchar, 1, func(e *nexmark.Event) row.Value { return row.String(e.Auction.Description) }},
	"auction.initialbid":  {types.BigInt, 1, func(e *nexmark.Event) row.Value { return row.BigInt(e.Auction.InitialBid) }},
	"auction.reserve":     {types.BigInt, 1, func(e *nexmark.Event) row.Value { return row.BigInt(e.Auction.Reserve) }},
	"auction.datetime":    {types.Timestamp, 1, func(e *nexmark.Event) row.Value { return row.Timestamp(e.Auction.DateTime) }},
	"auction.expires":     {types.Timestamp, 1, func(e *nexmark.Event) row.Value { return row.Timestamp(e.Auction.Expires) }},
	"auction.seller":      {types.BigInt, 1, func(e *nexmark.Event) row.Value { return row.BigInt(e.Auction.Seller) }},
	"auction.category":    {types.BigInt, 1, func(e *nexmark.Event) row.Value { return row.BigInt(e.Auction.Category) }},
	"auction.extra":       {types.Varchar, 1, func(e *nexmark.Event) row.Value { return row.String(e.Auction.Extra) }},

	"bid.auction":  {types.BigInt, 2, func(e *nexmark.Event) row.Value { return row.BigInt(e.Bid.Auction) }},
	"bid.bidder":   {types.BigInt, 2, func(e *nexmark.Event) row.Value { return row.BigInt(e.Bid.Bidder) }},
	"bid.price":    {types.BigInt, 2, func(e *nexmark.Event) row.Value { return row.BigInt(e.Bid.Price) }},
	"bid.channel":  {types.Varchar, 2, func(e *nexmark.Event) row.Value { return row.String(e.Bid.Channel) }},
	"bid.url":      {types.Varchar, 2, func(e *nexmark.Event) row.Value { return row.String(e.Bid.URL) }},
	"bid.datetime": {types.Timestamp, 2, func(e *nexmark.Event) row.Value { return row.Timestamp(e.Bid.DateTime) }},
	"bid.extra":    {types.Varchar, 2, func(e *nexmark.Event) row.Value { return row.String(e.Bid.Extra) }},
}

// nexmarkSlot fills column out of a row from its field.
type nexmarkSlot struct {
	out int
	get func(e *nexmark.Event) row.Value
}

// nexmarkSource reads the generator's events as rows of the requested
// columns. Each column is matched to an event field by its path,
// ignoring case, and must have the field's type kind; the fields of the
// event kinds a row is not are NULL. A Where on the event_type column
// skips the events of other kinds before their rows are built; on any
// other column it is ignored.
func nexmarkSource(t Table, o options, cols []int, w Where) (Source, error) {
	if err := t.noMetadata("nexmark", cols); err != nil {
		return Source{}, err
	}
	cfg, err := nexmarkConfig(o)
	if err != nil {
		return Source{}, err
	}
	// plans[k] lists the slots a row of event kind k fills; the others
	// stay NULL (the zero Value).
	var plans [3][]nexmarkSlot
	keep := [3]bool{true, true, true}
	for out, i := range cols {
		c := t.Columns[i]
		if c.Virtual {
			return Source{}, t.columnErr(c, "a computed column is not read from the connector")
		}
		f, ok := nexmarkFields[strings.ToLower(c.Name())]
		if !ok {
			return Source{}, t.columnErr(c, "the nexmark connector has no such field; its fields: %s", nexmarkFieldNames())
		}
		if c.Type.Kind != f.kind {
			return Source{}, t.columnErr(c, "declared %s, but the nexmark connector gives %s", c.Type.Kind, f.kind)
		}
		if out == w.Col && f.of < 0 {
			keep = [3]bool{}
			for _, v := range w.In {
				if !v.IsNull() && v.I >= 0 && v.I < 3 {
					keep[v.I] = true
				}
			}
		}
		for k := range plans {
			if f.of < 0 || f.of == k {
				plans[k] = append(plans[k], nexmarkSlot{out, f.get})
			}
		}
	}
	src, err := nexmark.Source(cfg)
	if err != nil {
		return Source{}, fmt.Errorf("table %s: %w: %v", t.Name, ErrOption, err)
	}
	width, room := len(cols), max(len(cols), w.Room)
	conv := func(dst []row.Row, src []nexmark.Event) int {
		// One allocation per row, not one per batch: a row that ends up in
		// keyed state (a join's, a deduplication's) must not keep the
		// values of its whole batch alive.
		n := 0
		for i := range src {
			e := &src[i]
			if !keep[e.Kind] {
				continue
			}
			v := make([]row.Value, width, room)
			for _, s := range plans[e.Kind] {
				v[s.out] = s.get(e)
			}
			dst[n] = row.Row{V: v}
			n++
		}
		return n
	}
	rate, err := o.int("rate", 0, 1<<40)
	if err != nil {
		return Source{}, err
	}
	return Source{Source: mapSource(connector.Throttle(src, float64(rate)), conv), Bounded: cfg.NumEvents > 0}, nil
}

func nexmarkFieldNames() string {
	return "event_type, person.{id, name, emailAddress, creditCard, city, state, dateTime, extra}, " +
		"auction.{id, itemName, description, initialBid, reserve, dateTime, expires, seller, category, extra}, " +
		"bid.{auction, bidder, price, channel, url, dateTime, extra}"
}
