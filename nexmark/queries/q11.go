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

// bidsPerBidder counts each bidder's bids in the windows of a, as q11
// (sessions) and q12 (tumbling windows) do.
func bidsPerBidder(in weir.Stream[nexmark.Event], a weir.WindowAssigner, name string) weir.Stream[Q11Row] {
	bidders := weir.Map(Bids(in), func(b nexmark.Bid) int64 { return b.Bidder }, weir.Name(name+"-bidder"))
	counts := weir.AggregateWindow(weir.WindowBy(weir.KeyBy(bidders, func(b int64) int64 { return b }), a),
		weir.Count[int64](), weir.Name(name+"-windows"))
	return weir.Map(counts, func(w weir.Windowed[int64, int64]) Q11Row {
		return Q11Row{Bidder: w.Key, BidCount: w.Value, StartTime: w.Window.Start, EndTime: w.Window.End}
	}, weir.Name(name))
}

func init() {
	Register(Query{Name: "q11", Description: "user sessions: bids per bidder per session of activity (10 s gap)", Build: func(in weir.Stream[nexmark.Event], out Output) {
		Emit(bidsPerBidder(in, weir.Session(Seconds(10)), "q11"), out)
	}})
}
