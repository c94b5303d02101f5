package queries

import (
	"fmt"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/nexmark"
)

// Q19Row is a changelog row of q19, the ten highest bids of every auction
// with their rank, the Nexmark SQL
//
//	SELECT * FROM
//	  (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number
//	   FROM bid)
//	WHERE rank_number <= 10;
//
// The rows are keyed by (auction, rank_number), as Flink's append-only
// top-N with a rank column emits them: a bid entering an auction's top ten
// at rank r changes the rows at ranks r and below, each change written as
// "-U" of the old row and "+U" of the new one, or "+I" for a rank that was
// empty. ROW_NUMBER leaves the order of equal prices open (Flink uses
// arrival order); here equal prices rank by earlier dateTime first and then
// by arrival, which is deterministic because an auction's bids with the
// same dateTime come from one generator, in its order.
type Q19Row struct {
	Op         string `json:"op"`
	Auction    int64  `json:"auction"`
	Bidder     int64  `json:"bidder"`
	Price      int64  `json:"price"`
	Channel    string `json:"channel"`
	URL        string `json:"url"`
	DateTime   int64  `json:"dateTime"`
	Extra      string `json:"extra"`
	RankNumber int64  `json:"rank_number"`
}

// q19TopN is the number of ranks q19 keeps per auction.
const q19TopN = 10

// q19Entry is a bid in an auction's top list, without the auction: its
// strings are kept as one (channel, url, extra concatenated), one pointer
// for the garbage collector to follow and one copy when a checkpoint
// encodes it.
type q19Entry struct {
	Bidder, Price, DateTime int64
	ChannelEnd              int32 // Strings[:ChannelEnd] is the channel
	URLEnd                  int32 // Strings[ChannelEnd:URLEnd] is the url
	Strings                 string
}

func q19EntryOf(b nexmark.Bid) q19Entry {
	return q19Entry{Bidder: b.Bidder, Price: b.Price, DateTime: b.DateTime, ChannelEnd: int32(len(b.Channel)),
		URLEnd: int32(len(b.Channel) + len(b.URL)), Strings: b.Channel + b.URL + b.Extra}
}

func (e *q19Entry) row(op string, auction int64, rank int) Q19Row {
	return Q19Row{Op: op, Auction: auction, Bidder: e.Bidder, Price: e.Price,
		Channel: e.Strings[:e.ChannelEnd], URL: e.Strings[e.ChannelEnd:e.URLEnd], DateTime: e.DateTime,
		Extra: e.Strings[e.URLEnd:], RankNumber: int64(rank)}
}

// q19Top is an auction's best bids, best first, at most q19TopN. A bid
// that enters it changes it in place, shifting the bids below it down one
// rank, as the hand-written loop changes its list: a slice is state that
// may change in place (weir's state docs), so a checkpoint encodes the
// lists read since the one before while the subtask pauses for it, and
// nothing is copied when a bid is read or enters.
type q19Top []q19Entry

// q19Entries is the codec of a top list's entries.
var q19Entries = codec.MustFor[[]q19Entry]()

// AppendBinary appends the top's entries (codec.Marshaler).
func (t q19Top) AppendBinary(dst []byte) ([]byte, error) {
	return q19Entries.Append(dst, t), nil
}

// DecodeBinary decodes what AppendBinary appended (codec.Unmarshaler),
// into a list with room for q19TopN bids.
func (t *q19Top) DecodeBinary(src []byte) (int, error) {
	var bids []q19Entry
	n, err := q19Entries.Decode(src, &bids)
	if err != nil {
		return 0, fmt.Errorf("q19 top list: %w", err)
	}
	if len(bids) > q19TopN {
		return 0, fmt.Errorf("q19 top list of %d bids: %w", len(bids), codec.ErrCorrupt)
	}
	for _, e := range bids {
		if e.ChannelEnd < 0 || e.ChannelEnd > e.URLEnd || int(e.URLEnd) > len(e.Strings) {
			return 0, fmt.Errorf("q19 top list: a bid's strings end at %d and %d of %d: %w", e.ChannelEnd, e.URLEnd, len(e.Strings), codec.ErrCorrupt)
		}
	}
	*t = append(make(q19Top, 0, q19TopN), bids...)
	return n, nil
}

type q19Fn struct {
	top *weir.ValueState[q19Top, int64]
}

func (f *q19Fn) Open(sc *weir.StateContext[int64]) error {
	f.top = weir.NewValueState[q19Top](sc, "top")
	return nil
}

func (f *q19Fn) ProcessElement(ctx *weir.KeyedContext[int64, Q19Row], b nexmark.Bid) error {
	top, _ := f.top.Value()
	// The new bid goes after every kept bid that ranks before or with it.
	pos := 0
	for pos < len(top) && (top[pos].Price > b.Price || top[pos].Price == b.Price && top[pos].DateTime <= b.DateTime) {
		pos++
	}
	if pos >= q19TopN {
		return nil
	}
	n := len(top)
	if top == nil {
		top = make(q19Top, 0, q19TopN)
	}
	if n < q19TopN {
		top = append(top, q19Entry{})
	}
	// Each rank from pos down takes the bid ranked above it, the new one
	// first; the last is dropped when the list was full.
	e := q19EntryOf(b)
	for i := pos; i < len(top); i++ {
		if i < n {
			ctx.Emit(top[i].row(UpdateBefore, b.Auction, i+1))
			top[i], e = e, top[i]
			ctx.Emit(top[i].row(UpdateAfter, b.Auction, i+1))
		} else {
			top[i] = e
			ctx.Emit(top[i].row(Insert, b.Auction, i+1))
		}
	}
	if n < q19TopN {
		f.top.Update(top) // a longer list
	}
	return nil
}

func init() {
	Register(Query{Name: "q19", Description: "top 10 bids by price of each auction, with their rank (changelog)",
		Build: func(in weir.Stream[nexmark.Event], out Output) {
			ks := weir.KeyBy(Bids(in), func(b nexmark.Bid) int64 { return b.Auction })
			Emit(weir.Process(ks, func() weir.KeyedProcessFunction[int64, nexmark.Bid, Q19Row] { return &q19Fn{} },
				weir.Name("q19")), out)
		}})
}
