package nexmark

import (
	"bytes"
	"encoding/json"
	"testing"
)

// jsonEvent mirrors the AppendJSON format for decoding with encoding/json.
type jsonEvent struct {
	Type string `json:"type"`
	// person and auction
	ID    *int64 `json:"id"`
	Extra string `json:"extra"`
	// person
	Name         string `json:"name"`
	EmailAddress string `json:"emailAddress"`
	CreditCard   string `json:"creditCard"`
	City         string `json:"city"`
	State        string `json:"state"`
	DateTime     int64  `json:"dateTime"`
	// auction
	ItemName    string `json:"itemName"`
	Description string `json:"description"`
	InitialBid  int64  `json:"initialBid"`
	Reserve     int64  `json:"reserve"`
	Expires     int64  `json:"expires"`
	Seller      int64  `json:"seller"`
	Category    int64  `json:"category"`
	// bid
	Auction int64  `json:"auction"`
	Bidder  int64  `json:"bidder"`
	Price   int64  `json:"price"`
	Channel string `json:"channel"`
	URL     string `json:"url"`
}

func (j *jsonEvent) event(t *testing.T) Event {
	t.Helper()
	switch j.Type {
	case "person":
		return Event{Kind: PersonEvent, Person: Person{ID: *j.ID, Name: j.Name, EmailAddress: j.EmailAddress,
			CreditCard: j.CreditCard, City: j.City, State: j.State, DateTime: j.DateTime, Extra: j.Extra}}
	case "auction":
		return Event{Kind: AuctionEvent, Auction: Auction{ID: *j.ID, ItemName: j.ItemName, Description: j.Description,
			InitialBid: j.InitialBid, Reserve: j.Reserve, DateTime: j.DateTime, Expires: j.Expires,
			Seller: j.Seller, Category: j.Category, Extra: j.Extra}}
	case "bid":
		return Event{Kind: BidEvent, Bid: Bid{Auction: j.Auction, Bidder: j.Bidder, Price: j.Price,
			Channel: j.Channel, URL: j.URL, DateTime: j.DateTime, Extra: j.Extra}}
	}
	t.Fatalf("unknown type %q", j.Type)
	return Event{}
}

// TestJSONParsesBack decodes every line with encoding/json (which rejects
// invalid JSON) and checks the values equal the generated event.
func TestJSONParsesBack(t *testing.T) {
	n := int64(20000)
	if testing.Short() {
		n = 2000
	}
	g := mustGenerator(t, DefaultConfig())
	var e Event
	var buf []byte
	for i := int64(0); i < n; i++ {
		g.EventAt(i, &e)
		buf = AppendJSON(buf[:0], &e)
		if !json.Valid(buf) {
			t.Fatalf("event %d: invalid JSON %s", i, buf)
		}
		dec := json.NewDecoder(bytes.NewReader(buf))
		dec.DisallowUnknownFields()
		var j jsonEvent
		if err := dec.Decode(&j); err != nil {
			t.Fatalf("event %d: %v in %s", i, err, buf)
		}
		if got := j.event(t); got != e {
			t.Fatalf("event %d: decoded %+v, want %+v", i, got, e)
		}
	}
}

func TestJSONEscaping(t *testing.T) {
	weird := "q\"b\\s/\x00\x01\x1f\x7f tab\t nl\n é ☃ \u2028 end"
	events := []Event{
		{Kind: PersonEvent, Person: Person{ID: -1, Name: weird, EmailAddress: "", CreditCard: weird, City: "c", State: "s", DateTime: -5, Extra: weird}},
		{Kind: AuctionEvent, Auction: Auction{ID: 1 << 62, ItemName: weird, Description: "", Extra: "\\"}},
		{Kind: BidEvent, Bid: Bid{Auction: -1 << 63, Channel: weird, URL: "\"", Extra: ""}},
	}
	for _, e := range events {
		line := AppendJSONLine([]byte("prefix"), &e)
		if !bytes.HasPrefix(line, []byte("prefix")) || line[len(line)-1] != '\n' {
			t.Fatalf("AppendJSONLine framing: %q", line)
		}
		obj := line[len("prefix") : len(line)-1]
		if bytes.IndexByte(obj, '\n') >= 0 {
			t.Fatalf("newline inside object: %q", obj)
		}
		var j jsonEvent
		if err := json.Unmarshal(obj, &j); err != nil {
			t.Fatalf("%v in %s", err, obj)
		}
		if got := j.event(t); got != e {
			t.Fatalf("decoded %+v, want %+v", got, e)
		}
	}
}

func TestJSONFieldOrder(t *testing.T) {
	g := mustGenerator(t, DefaultConfig())
	var e Event
	want := map[EventKind]string{
		PersonEvent:  `{"type":"person","id":1000,"name":"Peter Jones","emailAddress":"nhd@xcat.com","creditCard":"7241 7320 9143 4888","city":"Portland","state":"WY","dateTime":1436918400000,"extra":"`,
		AuctionEvent: `{"type":"auction","id":1000,"itemName":"wkx mgee","description":"eszpqxtdxrvwmmywkmogoahf","initialBid":28873,"reserve":29448,"dateTime":1436918400010,"expires":1436918409425,"seller":1000,"category":13,"extra":"`,
		BidEvent:     `{"type":"bid","auction":1000,"bidder":1001,"price":32530001,"channel":"Facebook","url":"https://www.nexmark.com/uul_/rwfd/rtek/item.htm?query=1","dateTime":1436918400040,"extra":"`,
	}
	for i, kind := range []EventKind{PersonEvent, AuctionEvent, BidEvent} {
		g.EventAt([]int64{0, 1, 4}[i], &e)
		if e.Kind != kind {
			t.Fatalf("event kind %v, want %v", e.Kind, kind)
		}
		if got := string(AppendJSON(nil, &e)); len(got) < len(want[kind]) || got[:len(want[kind])] != want[kind] {
			t.Errorf("%v JSON:\n got %s\nwant prefix %s", kind, got, want[kind])
		}
	}
}
