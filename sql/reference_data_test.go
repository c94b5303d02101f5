package sql

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The reference tests' input: bids, auctions and persons in the shape of
// Nexmark's, small, deterministic, with NULLs, keys without partners on
// the other side of a join, and event times out of order by less than
// the watermark delay, so that no row is late.

// t0 is the first event time, 2024-01-01 00:00:00 UTC in milliseconds.
const t0 = int64(1704067200000)

// tablesDDL declares bids, auctions and persons over ${bids},
// ${auctions} and ${persons}, with computed columns and watermarks 5
// seconds behind the event time.
const tablesDDL = `
CREATE TABLE bids (
  auction BIGINT, bidder BIGINT, price DECIMAL(10, 2), channel VARCHAR, url VARCHAR, ts TIMESTAMP(3),
  cents AS CAST(price * 100 AS BIGINT),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '${bids}', 'format' = 'json');
CREATE TABLE auctions (
  id BIGINT, seller BIGINT, category INT, initialBid DOUBLE, itemName VARCHAR, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '${auctions}', 'format' = 'json');
CREATE TABLE persons (
  id BIGINT, name VARCHAR, city VARCHAR, state VARCHAR, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '${persons}', 'format' = 'json');
`

// sinkDDL declares the table out with columns cols over ${out}.
func sinkDDL(cols string) string {
	return "CREATE TABLE out (" + cols + ") WITH ('connector' = 'filesystem', 'path' = '${out}', 'format' = 'json');\n"
}

// jitter returns a time offset of up to 3 seconds, less than the
// watermark delay.
func jitter(r *rand.Rand) int64 { return r.Int64N(3000) }

// bidRows returns n bids, about two a second: auctions 1 to 20, bidders
// 1 to 10, every 17th price and every 11th channel NULL, the event times
// distinct.
func bidRows(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	channels := []string{"apple", "google", "facebook", "baidu"}
	out := make([]string, n)
	for i := range n {
		price := fmt.Sprintf("%d.%02d", 1+r.IntN(100), r.IntN(100))
		if i%17 == 16 {
			price = "null"
		}
		channel := `"` + channels[r.IntN(len(channels))] + `"`
		if i%11 == 10 {
			channel = "null"
		}
		// Distinct times: a multiple of 500 ms plus a jitter that is not.
		ts := t0 + int64(i)*500 + jitter(r)/10*10 + int64(i%10)
		out[i] = fmt.Sprintf(`{"auction":%d,"bidder":%d,"price":%s,"channel":%s,"url":"https://x.org/a/%d?b=%d","ts":%d}`,
			1+r.IntN(20), 1+r.IntN(10), price, channel, i%7, r.IntN(5), ts)
	}
	return out
}

// auctionRows returns auctions 5 to 24, one every three seconds, so
// that bids of auctions 1 to 4 have no auction.
func auctionRows() []string {
	r := rand.New(rand.NewPCG(3, 4))
	var out []string
	for id := 5; id <= 24; id++ {
		ts := t0 + int64(id-5)*3000 + jitter(r)
		out = append(out, fmt.Sprintf(`{"id":%d,"seller":%d,"category":%d,"initialBid":%d.5,"itemName":"item-%d","ts":%d}`,
			id, 1+r.IntN(12), 1+r.IntN(4), r.IntN(50), id, ts))
	}
	return out
}

// personRows returns persons 3 to 12, so that sellers 1 and 2 are
// nobody, and bidders 1 and 2 too.
func personRows() []string {
	r := rand.New(rand.NewPCG(5, 6))
	cities := []string{"Boise", "Portland", "Kent", "Bend"}
	states := []string{"ID", "OR", "WA", "OR"}
	var out []string
	for id := 3; id <= 12; id++ {
		c := r.IntN(len(cities))
		ts := t0 + int64(id-3)*4000 + jitter(r)
		out = append(out, fmt.Sprintf(`{"id":%d,"name":"p%d","city":"%s","state":"%s","ts":%d}`, id, id, cities[c], states[c], ts))
	}
	return out
}

// inputs returns the three tables' rows with n bids.
func inputs(n int) map[string][]string {
	return map[string][]string{"bids": bidRows(n), "auctions": auctionRows(), "persons": personRows()}
}

// script joins the tables' DDL, the sink's and the statements.
func script(sinkCols string, stmts ...string) string {
	return tablesDDL + sinkDDL(sinkCols) + strings.Join(stmts, ";\n")
}
