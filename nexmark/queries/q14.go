package queries

import (
	"strings"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q14Row is a bid with a converted price, a time-of-day class and a count
// of 'c' characters. It implements
//
//	SELECT auction, bidder, 0.908 * price AS price,
//	       CASE WHEN HOUR(dateTime) >= 8 AND HOUR(dateTime) <= 18 THEN 'dayTime'
//	            WHEN HOUR(dateTime) <= 6 OR HOUR(dateTime) >= 20 THEN 'nightTime'
//	            ELSE 'otherTime' END AS bidTimeType,
//	       dateTime, extra, count_char(extra, 'c') AS c_counts
//	FROM bid
//	WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000
//
// As in SQL, where 0.908 * price is an exact DECIMAL, the filter compares
// 908 * price with the bounds times 1000 in integers, and price is the
// float64 nearest the exact decimal, float64(908*price)/1000. HOUR is taken
// in UTC (Flink's TIMESTAMP of the event's instant). count_char counts the
// bytes 'c' in the UTF-8 encoding of extra.
type Q14Row struct {
	Auction     int64   `json:"auction"`
	Bidder      int64   `json:"bidder"`
	Price       float64 `json:"price"`
	BidTimeType string  `json:"bidTimeType"`
	DateTime    int64   `json:"dateTime"`
	Extra       string  `json:"extra"`
	CCounts     int64   `json:"c_counts"`
}

// q14TimeType classifies an event time by its UTC hour.
func q14TimeType(ms int64) string {
	h := time.UnixMilli(ms).UTC().Hour()
	switch {
	case h >= 8 && h <= 18:
		return "dayTime"
	case h <= 6 || h >= 20:
		return "nightTime"
	}
	return "otherTime"
}

func init() {
	Register(Query{Name: "q14", Description: "calculation: bids priced between 1M and 50M euros, with a time-of-day class and a count of 'c' in extra", Build: func(in weir.Stream[nexmark.Event], out Output) {
		Emit(weir.FlatMap(Bids(in), func(b nexmark.Bid, emit func(Q14Row)) {
			milli := 908 * b.Price // 0.908 * price, in thousandths
			if milli <= 1_000_000_000 || milli >= 50_000_000_000 {
				return
			}
			emit(Q14Row{Auction: b.Auction, Bidder: b.Bidder, Price: float64(milli) / 1000, BidTimeType: q14TimeType(b.DateTime),
				DateTime: b.DateTime, Extra: b.Extra, CCounts: int64(strings.Count(b.Extra, "c"))})
		}, weir.Name("q14")), out)
	}})
}
