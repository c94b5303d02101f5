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
type Q12Row = Q11Row

func init() {
	Register(Query{Name: "q12", Description: "bids per bidder per 10 s tumbling window (event time in place of the SQL's processing time)", Build: func(in weir.Stream[nexmark.Event], out Output) {
		Emit(bidsPerBidder(in, weir.Tumbling(Seconds(10)), "q12"), out)
	}})
}
