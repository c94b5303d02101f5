package sql

import (
	"fmt"
	"testing"
)

// Operators fed by others: aggregations of joins and deduplications,
// windows over joins and unions, joins of aggregations.

func TestAnAggregationOfAnOuterJoinMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(150), failures: true, script: script(
		`seller BIGINT, auctions BIGINT, named BIGINT`,
		`INSERT INTO out SELECT A.seller, COUNT(*), COUNT(P.name)
		 FROM auctions A LEFT JOIN persons P ON A.seller = P.id GROUP BY A.seller`)})
}

func TestAFullJoinOfTwoAggregationsMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), failures: true, script: script(
		`k BIGINT, bids BIGINT, auctions BIGINT`,
		`INSERT INTO out SELECT COALESCE(B.auction, A.seller), B.n, A.n
		 FROM (SELECT auction, COUNT(*) AS n FROM bids GROUP BY auction) B
		 FULL JOIN (SELECT seller, COUNT(*) AS n FROM auctions GROUP BY seller) A ON B.auction = A.seller`)})
}

// The join keeps its append-only side (bids) as lists and its updating
// side (the aggregation, which retracts) as distinct rows: were the
// updating side kept as lists, its first retraction would fail the job.
func TestAnInnerJoinOfATableAndAnAggregationMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), failures: true, script: script(
		`auction BIGINT, price DECIMAL(10, 2), auctions BIGINT`,
		`INSERT INTO out SELECT B.auction, B.price, A.n
		 FROM bids B JOIN (SELECT seller, COUNT(*) AS n FROM auctions GROUP BY seller) A ON B.auction = A.seller`)})
}

func TestAnAggregationOfTheLastRowPerKeyMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), failures: true, script: script(
		`channel VARCHAR, bidders BIGINT, hi DECIMAL(10, 2)`,
		`INSERT INTO out SELECT channel, COUNT(*), MAX(price) FROM (
		   SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder ORDER BY ts DESC) AS rn FROM bids) WHERE rn = 1)
		 GROUP BY channel`)})
}

func TestAWindowAggregationOfAnIntervalJoinMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`category INT, window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT`,
		`CREATE VIEW joined AS SELECT A.category, B.ts FROM auctions A JOIN bids B
		   ON A.id = B.auction AND B.ts BETWEEN A.ts AND A.ts + INTERVAL '15' SECOND`,
		`INSERT INTO out SELECT category, window_start, window_end, COUNT(*)
		 FROM TABLE(TUMBLE(TABLE joined, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		 GROUP BY category, window_start, window_end`)})
}

func TestAWindowAggregationOfAUnionMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), failures: true, script: script(
		`kind VARCHAR, window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT`,
		`CREATE VIEW events AS SELECT 'bid' AS kind, ts FROM bids UNION ALL SELECT 'auction' AS kind, ts FROM auctions
		   UNION ALL SELECT 'person' AS kind, ts FROM persons`,
		`INSERT INTO out SELECT kind, window_start, window_end, COUNT(*)
		 FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '20' SECOND))
		 GROUP BY kind, window_start, window_end`)})
}

func TestAWindowAggregationOfAWindowJoinMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT, total DECIMAL(38, 2)`,
		`CREATE VIEW joined AS SELECT B.price, B.window_start, B.window_end
		 FROM (SELECT * FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))) B
		 JOIN (SELECT * FROM TABLE(TUMBLE(TABLE auctions, DESCRIPTOR(ts), INTERVAL '10' SECOND))) A
		 ON B.auction = A.id AND B.window_start = A.window_start AND B.window_end = A.window_end`,
		`INSERT INTO out SELECT window_start, window_end, COUNT(*), SUM(price) FROM joined GROUP BY window_start, window_end`)})
}

func TestAWindowAggregationByAnExpressionOfAComputedColumnMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`bucket BIGINT, window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT, cents BIGINT`,
		`INSERT INTO out SELECT bidder % 3, window_start, window_end, COUNT(*), SUM(cents)
		 FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		 WHERE cents > 1000
		 GROUP BY bidder % 3, window_start, window_end`)})
}

func TestSelectDistinctOfAWindowTableFunctionMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`window_start TIMESTAMP(3), window_end TIMESTAMP(3), channel VARCHAR`,
		`INSERT INTO out SELECT DISTINCT window_start, window_end, channel
		 FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))`)})
}

func TestAWindowJoinOfHopAndCumulateWindowsMatchesTheReference(t *testing.T) {
	for name, tvf := range map[string]string{
		"hop":      "HOP(TABLE %s, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
		"cumulate": "CUMULATE(TABLE %s, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)",
	} {
		t.Run(name, func(t *testing.T) {
			b, a := fmt.Sprintf(tvf, "bids"), fmt.Sprintf(tvf, "auctions")
			checkReference(t, refCase{inputs: inputs(150), script: script(
				`auction BIGINT, seller BIGINT, window_start TIMESTAMP(3), window_end TIMESTAMP(3)`,
				`INSERT INTO out SELECT B.auction, A.seller, B.window_start, B.window_end
				 FROM (SELECT * FROM TABLE(`+b+`)) B JOIN (SELECT * FROM TABLE(`+a+`)) A
				 ON B.auction = A.id AND B.window_start = A.window_start AND B.window_end = A.window_end`)})
		})
	}
}

func TestAWindowTopNOfAWindowJoinMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`window_start TIMESTAMP(3), window_end TIMESTAMP(3), auction BIGINT, price DECIMAL(10, 2)`,
		`INSERT INTO out SELECT window_start, window_end, auction, price FROM (
		   SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC, ts) AS rn FROM (
		     SELECT B.auction, B.price, B.ts, B.window_start, B.window_end
		     FROM (SELECT * FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))) B
		     JOIN (SELECT * FROM TABLE(TUMBLE(TABLE auctions, DESCRIPTOR(ts), INTERVAL '10' SECOND))) A
		     ON B.auction = A.id AND B.window_start = A.window_start AND B.window_end = A.window_end))
		 WHERE rn <= 2`)})
}
