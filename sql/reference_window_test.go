package sql

import "testing"

// The window table functions with window aggregation, the legacy group
// windows, window joins and window TopN, against the reference.

const windowAggCols = `bidder BIGINT, window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT, total DECIMAL(38, 2),
	lo DECIMAL(10, 2), hi DECIMAL(10, 2), channels BIGINT, apple BIGINT`

const windowAggSelect = `SELECT bidder, window_start, window_end, COUNT(*), SUM(price), MIN(price), MAX(price),
	COUNT(DISTINCT channel), COUNT(*) FILTER (WHERE channel = 'apple')`

func TestTumbleWindowAggregationMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), failures: true, script: script(windowAggCols,
		`INSERT INTO out `+windowAggSelect+`
		 FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		 GROUP BY bidder, window_start, window_end`)})
}

func TestHopWindowAggregationMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), script: script(windowAggCols,
		`INSERT INTO out `+windowAggSelect+`
		 FROM TABLE(HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND))
		 GROUP BY bidder, window_start, window_end`)})
}

func TestCumulateWindowAggregationMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), script: script(windowAggCols,
		`INSERT INTO out `+windowAggSelect+`
		 FROM TABLE(CUMULATE(TABLE bids, DESCRIPTOR(ts), INTERVAL '4' SECOND, INTERVAL '20' SECOND))
		 GROUP BY bidder, window_start, window_end`)})
}

func TestSessionWindowAggregationMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), failures: true, script: script(windowAggCols,
		`INSERT INTO out `+windowAggSelect+`
		 FROM TABLE(SESSION(TABLE bids PARTITION BY bidder, DESCRIPTOR(ts), INTERVAL '4' SECOND))
		 GROUP BY bidder, window_start, window_end`)})
}

func TestAWindowTableFunctionOnItsOwnMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(100), script: script(
		`auction BIGINT, ts TIMESTAMP(3), window_start TIMESTAMP(3), window_end TIMESTAMP(3), window_time TIMESTAMP(3)`,
		`INSERT INTO out SELECT auction, ts, window_start, window_end, window_time
		 FROM TABLE(HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND))
		 WHERE auction < 10`)})
}

func TestLegacyGroupWindowsWithStartAndEndMatchTheReference(t *testing.T) {
	for name, window := range map[string]string{"tumble": "TUMBLE", "session": "SESSION"} {
		size := "INTERVAL '10' SECOND"
		if window == "SESSION" {
			size = "INTERVAL '3' SECOND"
		}
		t.Run(name, func(t *testing.T) {
			checkReference(t, refCase{inputs: inputs(300), script: script(
				`auction BIGINT, wstart TIMESTAMP(3), wend TIMESTAMP(3), n BIGINT, avg_price DECIMAL(38, 6)`,
				`INSERT INTO out SELECT auction, `+window+`_START(ts, `+size+`), `+window+`_END(ts, `+size+`), COUNT(*), AVG(price)
				 FROM bids GROUP BY auction, `+window+`(ts, `+size+`)`)})
		})
	}
}

func TestAWindowAggregationOverAnotherMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), script: script(
		`window_start TIMESTAMP(3), window_end TIMESTAMP(3), bidders BIGINT, top BIGINT`,
		`CREATE VIEW per_bidder AS
		 SELECT bidder, window_start, window_end, COUNT(*) AS n
		 FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		 GROUP BY bidder, window_start, window_end`,
		`INSERT INTO out SELECT window_start, window_end, COUNT(*), MAX(n)
		 FROM per_bidder GROUP BY window_start, window_end`)})
}

func TestWindowJoinMatchesTheReference(t *testing.T) {
	for _, kind := range []string{"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"} {
		t.Run(kind, func(t *testing.T) {
			checkReference(t, refCase{inputs: inputs(200), failures: kind == "JOIN", script: script(
				`auction BIGINT, price DECIMAL(10, 2), id BIGINT, seller BIGINT, window_start TIMESTAMP(3), window_end TIMESTAMP(3)`,
				`INSERT INTO out SELECT B.auction, B.price, A.id, A.seller, COALESCE(B.window_start, A.window_start), COALESCE(B.window_end, A.window_end)
				 FROM (SELECT * FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))) B
				 `+kind+` (SELECT * FROM TABLE(TUMBLE(TABLE auctions, DESCRIPTOR(ts), INTERVAL '10' SECOND))) A
				 ON B.auction = A.id AND B.window_start = A.window_start AND B.window_end = A.window_end`)})
		})
	}
}

func TestWindowTopNMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), failures: true, script: script(
		`window_start TIMESTAMP(3), window_end TIMESTAMP(3), bidder BIGINT, n BIGINT, rownum BIGINT`,
		`INSERT INTO out SELECT window_start, window_end, bidder, n, rownum FROM (
		   SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY n DESC, bidder) AS rownum
		   FROM (SELECT bidder, window_start, window_end, COUNT(*) AS n
		         FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		         GROUP BY bidder, window_start, window_end))
		 WHERE rownum <= 3`)})
}

func TestASessionTableFunctionOnItsOwnMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), failures: true, script: script(
		`bidder BIGINT, ts TIMESTAMP(3), window_start TIMESTAMP(3), window_end TIMESTAMP(3)`,
		`INSERT INTO out SELECT bidder, ts, window_start, window_end
		 FROM TABLE(SESSION(TABLE bids PARTITION BY bidder, DESCRIPTOR(ts), INTERVAL '5' SECOND))`)})
}

func TestACumulateWindowWithAnOffsetMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`bidder BIGINT, window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT`,
		`INSERT INTO out SELECT bidder, window_start, window_end, COUNT(*)
		 FROM TABLE(CUMULATE(TABLE bids, DESCRIPTOR(ts), INTERVAL '3' SECOND, INTERVAL '9' SECOND, INTERVAL '1' SECOND))
		 GROUP BY bidder, window_start, window_end`)})
}
