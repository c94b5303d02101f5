package queries

import (
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q12Row is the number of bids a bidder made in a 10 s tumbling window. It
// implements
//
//	CREATE VIEW B AS SELECT *, PROCTIME() AS p_time FROM bid;
//	SELECT bidder, count(*) AS bid_count,
//	       window_start AS starttime, window_end AS endtime
//	FROM TABLE(TUMBLE(TABLE B, DESCRIPTOR(p_time), INTERVAL '10' SECOND))
//	GROUP BY bidder, window_start, window_end
//
// with one deliberate difference: the windows follow event time (the bid's
// dateTime) instead of processing time (PROCTIME()), so that the result is
// deterministic and testable. A processing-time result depends on when
// each record happens to be processed. A row is written once, when the
// watermark passes the window's end.
type Q12Row struct {
	Bidder    int64 `json:"bidder"`
	BidCount  int64 `json:"bid_count"`
	StartTime int64 `json:"starttime"`
	EndTime   int64 `json:"endtime"`
}

// q12Count counts the records of a window.
type q12Count struct{}

func (q12Count) Create() int64                { return 0 }
func (q12Count) Add(acc int64, _ int64) int64 { return acc + 1 }
func (q12Count) Merge(a, b int64) int64       { return a + b }
func (q12Count) Result(acc int64) int64       { return acc }

func init() {
	Register(Query{Name: "q12", Description: "bids per bidder per 10 s tumbling window (event time in place of the SQL's processing time)", Build: func(in weir.Stream[nexmark.Event], out Output) {
		bidders := weir.Map(Bids(in), func(b nexmark.Bid) int64 { return b.Bidder }, weir.Name("q12-bidder"))
		counts := weir.AggregateWindow(weir.WindowBy(weir.KeyBy(bidders, func(b int64) int64 { return b }), weir.Tumbling(Seconds(10))),
			weir.Aggregator[int64, int64, int64](q12Count{}), weir.Name("q12-windows"))
		Emit(weir.Map(counts, func(w weir.Windowed[int64, int64]) Q12Row {
			return Q12Row{Bidder: w.Key, BidCount: w.Value, StartTime: w.Window.Start, EndTime: w.Window.End}
		}, weir.Name("q12")), out)
	}})
}
