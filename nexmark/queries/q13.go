package queries

import (
	"strconv"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q13Row is a bid enriched with a value from a bounded side table. It
// implements
//
//	SELECT B.auction, B.bidder, B.price, B.dateTime, S.value
//	FROM (SELECT *, PROCTIME() AS p_time FROM bid) B
//	JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
//	ON mod(B.auction, 10000) = S.key
//
// Deliberate difference: the SQL's side_input is a CSV file that the
// Nexmark scripts generate with 10,000 rows (key i, value "i" for i in
// 0..9999) and Flink looks up. Here the same table is built in memory when
// the query is built (q13SideInput), so the query needs no file and the
// processing-time lookup becomes a plain map lookup; since the table never
// changes, the result is the same. Bids without a matching key would be
// dropped (inner join); with this table every bid matches.
type Q13Row struct {
	Auction  int64  `json:"auction"`
	Bidder   int64  `json:"bidder"`
	Price    int64  `json:"price"`
	DateTime int64  `json:"dateTime"`
	Value    string `json:"value"`
}

// q13SideRows is the number of rows of the side table, as the Nexmark
// side-input generator's default (--num 10000).
const q13SideRows = 10000

// q13SideInput returns the side table: key i has value "i", for i in
// [0, q13SideRows).
func q13SideInput() map[int64]string {
	m := make(map[int64]string, q13SideRows)
	for i := range int64(q13SideRows) {
		m[i] = strconv.FormatInt(i, 10)
	}
	return m
}

func init() {
	Register(Query{Name: "q13", Description: "bounded side-input join: bids enriched from a static 10,000-row table on auction mod 10000", Build: func(in weir.Stream[nexmark.Event], out Output) {
		side := q13SideInput() // read-only, shared by the subtasks
		Emit(weir.FlatMap(Bids(in), func(b nexmark.Bid, emit func(Q13Row)) {
			// SQL MOD has the sign of the dividend, as Go's %.
			if v, ok := side[b.Auction%10000]; ok {
				emit(Q13Row{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, DateTime: b.DateTime, Value: v})
			}
		}, weir.Name("q13")), out)
	}})
}
