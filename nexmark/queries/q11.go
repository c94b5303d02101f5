package queries

import (
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q11Row is a bidder's session: the number of bids the bidder made in a
// session of activity, with the session's bounds. It implements
//
//	SELECT B.bidder, count(*) AS bid_count,
//	       SESSION_START(B.dateTime, INTERVAL '10' SECOND) AS starttime,
//	       SESSION_END(B.dateTime, INTERVAL '10' SECOND) AS endtime
//	FROM bid B
//	GROUP BY B.bidder, SESSION(B.dateTime, INTERVAL '10' SECOND)
//
// A session starts at its first bid and ends 10 s after its last; bids at
// most 10 s apart are in the same session (Flink's inclusive merge). A row
// is written once, when the watermark passes the session's end.
type Q11Row struct {
	Bidder    int64 `json:"bidder"`
	BidCount  int64 `json:"bid_count"`
	StartTime int64 `json:"starttime"`
	EndTime   int64 `json:"endtime"`
}

// q11Count counts the records of a window.
type q11Count struct{}

func (q11Count) Create() int64                { return 0 }
func (q11Count) Add(acc int64, _ int64) int64 { return acc + 1 }
func (q11Count) Merge(a, b int64) int64       { return a + b }
func (q11Count) Result(acc int64) int64       { return acc }

func init() {
	Register(Query{Name: "q11", Description: "user sessions: bids per bidder per session of activity (10 s gap)", Build: func(in weir.Stream[nexmark.Event], out Output) {
		bidders := weir.Map(Bids(in), func(b nexmark.Bid) int64 { return b.Bidder }, weir.Name("q11-bidder"))
		sessions := weir.AggregateWindow(weir.WindowBy(weir.KeyBy(bidders, func(b int64) int64 { return b }), weir.Session(Seconds(10))),
			weir.Aggregator[int64, int64, int64](q11Count{}), weir.Name("q11-sessions"))
		Emit(weir.Map(sessions, func(w weir.Windowed[int64, int64]) Q11Row {
			return Q11Row{Bidder: w.Key, BidCount: w.Value, StartTime: w.Window.Start, EndTime: w.Window.End}
		}, weir.Name("q11")), out)
	}})
}
