package sql

import "testing"

// Combinations and corner cases: NULL keys, NULL sort values, offsets,
// windows of rankings, joins without keys, updating inputs of DISTINCT,
// DISTINCT aggregates and UNION ALL.

func TestWindowTopNOfRawRowsWithoutTheRowNumberMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), script: script(
		`window_start TIMESTAMP(3), window_end TIMESTAMP(3), auction BIGINT, price DECIMAL(10, 2), ts TIMESTAMP(3)`,
		`INSERT INTO out SELECT window_start, window_end, auction, price, ts FROM (
		   SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, channel ORDER BY price DESC, ts) AS rn
		   FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)))
		 WHERE rn <= 2`)})
}

func TestWindowDeduplicationMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), failures: true, script: script(
		`window_start TIMESTAMP(3), window_end TIMESTAMP(3), bidder BIGINT, auction BIGINT, ts TIMESTAMP(3)`,
		`INSERT INTO out SELECT window_start, window_end, bidder, auction, ts FROM (
		   SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, bidder ORDER BY ts DESC) AS rn
		   FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)))
		 WHERE rn = 1`)})
}

func TestATumbleWithAnOffsetAndAGlobalSessionMatchTheReference(t *testing.T) {
	for name, tvf := range map[string]string{
		"offset":  `TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '3' SECOND)`,
		"session": `SESSION(TABLE bids, DESCRIPTOR(ts), INTERVAL '1' SECOND)`,
	} {
		t.Run(name, func(t *testing.T) {
			checkReference(t, refCase{inputs: inputs(300), script: script(
				`window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT, hi DECIMAL(10, 2)`,
				`INSERT INTO out SELECT window_start, window_end, COUNT(*), MAX(price) FROM TABLE(`+tvf+`)
				 GROUP BY window_start, window_end`)})
		})
	}
}

func TestALegacyHopWindowMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), script: script(
		`channel VARCHAR, wstart TIMESTAMP(3), wend TIMESTAMP(3), n BIGINT`,
		`INSERT INTO out SELECT channel, HOP_START(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND), HOP_END(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND), COUNT(*)
		 FROM bids GROUP BY channel, HOP(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND)`)})
}

func TestAWindowAggregationOverAHopAggregationMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), script: script(
		`window_start TIMESTAMP(3), window_end TIMESTAMP(3), auctions BIGINT, total BIGINT`,
		`CREATE VIEW per_auction AS
		 SELECT auction, window_start, window_end, COUNT(*) AS n
		 FROM TABLE(HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
		 GROUP BY auction, window_start, window_end`,
		`INSERT INTO out SELECT window_start, window_end, COUNT(*), SUM(n)
		 FROM per_auction GROUP BY window_start, window_end`)})
}

func TestGroupingByANullableKeyMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`channel VARCHAR, n BIGINT, prices BIGINT, lo DECIMAL(10, 2)`,
		`INSERT INTO out SELECT channel, COUNT(*), COUNT(price), MIN(price) FROM bids GROUP BY channel`)})
}

func TestAFullJoinOnNullableKeysMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(60), failures: true, script: script(
		`a BIGINT, ach VARCHAR, b BIGINT, bch VARCHAR`,
		`INSERT INTO out SELECT X.auction, X.channel, Y.auction, Y.channel
		 FROM (SELECT * FROM bids WHERE bidder < 4) X FULL JOIN (SELECT * FROM bids WHERE bidder > 8) Y
		 ON X.channel = Y.channel AND X.auction < Y.auction`)})
}

func TestAJoinWithoutEqualityKeysMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(40), script: script(
		`id BIGINT, pid BIGINT`,
		`INSERT INTO out SELECT A.id, P.id FROM auctions A JOIN persons P ON A.seller < P.id AND A.category = 1`)})
}

func TestTopNWithNullSortValuesMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`auction BIGINT, price DECIMAL(10, 2), ts TIMESTAMP(3), rn BIGINT`,
		`INSERT INTO out SELECT auction, price, ts, rn FROM (
		   SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price ASC, ts ASC) AS rn FROM bids)
		 WHERE rn <= 2`)})
}

func TestDistinctAndDistinctAggregatesOverAnUpdatingInputMatchTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), failures: true, script: script(
		`n BIGINT, bidders BIGINT, distinct_bids BIGINT`,
		`CREATE VIEW counts AS SELECT bidder, COUNT(*) / 5 AS n FROM bids GROUP BY bidder`,
		`INSERT INTO out SELECT n, COUNT(DISTINCT bidder), COUNT(DISTINCT bidder) FILTER (WHERE bidder > 3)
		 FROM (SELECT DISTINCT n, bidder FROM counts) GROUP BY n`)})
}

func TestUnionAllOfUpdatingInputsMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`k VARCHAR, n BIGINT`,
		`INSERT INTO out
		 SELECT CAST(bidder AS VARCHAR), COUNT(*) FROM bids GROUP BY bidder
		 UNION ALL SELECT channel, COUNT(*) FROM bids GROUP BY channel
		 UNION ALL SELECT itemName, CAST(category AS BIGINT) FROM auctions`)})
}

func TestAGoFunctionAsAGroupingKeyMatchesTheReference(t *testing.T) {
	registerOnce(t, "ref_bucket", func(n int64) int64 { return n / 3 })
	checkReference(t, refCase{inputs: inputs(200), failures: true, script: script(
		`bucket BIGINT, n BIGINT, avg_price DECIMAL(38, 6)`,
		`INSERT INTO out SELECT ref_bucket(bidder), COUNT(*), AVG(price) FROM bids GROUP BY ref_bucket(bidder)`)})
}

// The versioned table has one version per key, older than every bid.
func TestAnEventTimeTemporalJoinWithAStaticVersionedTableMatchesTheReference(t *testing.T) {
	in := inputs(200)
	in["fees"] = []string{
		`{"channel":"apple","fee":3,"ts":1704067190000}`,
		`{"channel":"google","fee":5,"ts":1704067191000}`,
		`{"channel":"baidu","fee":7,"ts":1704067192000}`,
	}
	for _, kind := range []string{"JOIN", "LEFT JOIN"} {
		t.Run(kind, func(t *testing.T) {
			checkReference(t, refCase{inputs: in, failures: kind == "JOIN", script: script(
				`auction BIGINT, channel VARCHAR, fee INT`,
				`CREATE TABLE fees (channel VARCHAR, fee INT, ts TIMESTAMP(3), PRIMARY KEY (channel) NOT ENFORCED,
				   WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
				 WITH ('connector' = 'filesystem', 'path' = '${fees}', 'format' = 'json')`,
				`INSERT INTO out SELECT B.auction, B.channel, F.fee
				 FROM bids B `+kind+` fees FOR SYSTEM_TIME AS OF B.ts AS F ON B.channel = F.channel`)})
		})
	}
}

func TestAnIntervalJoinWithStrictBoundsAndAConditionMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), failures: true, script: script(
		`auction BIGINT, b1 BIGINT, b2 BIGINT, t1 TIMESTAMP(3), t2 TIMESTAMP(3)`,
		`INSERT INTO out SELECT X.auction, X.bidder, Y.bidder, X.ts, Y.ts
		 FROM bids X JOIN bids Y ON X.auction = Y.auction AND Y.ts > X.ts AND Y.ts < X.ts + INTERVAL '8' SECOND AND X.bidder <> Y.bidder`)})
}

func TestCumulateWindowTopNWithHavingMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), script: script(
		`window_start TIMESTAMP(3), window_end TIMESTAMP(3), auction BIGINT, n BIGINT, rn BIGINT`,
		`INSERT INTO out SELECT window_start, window_end, auction, n, rn FROM (
		   SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY n DESC, auction ASC) AS rn
		   FROM (SELECT auction, window_start, window_end, COUNT(*) AS n
		         FROM TABLE(CUMULATE(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '20' SECOND))
		         GROUP BY auction, window_start, window_end HAVING COUNT(*) > 1))
		 WHERE rn BETWEEN 2 AND 3`)})
}

func TestAnIntervalJoinBoundingTheLeftSideByTheRightMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`auction BIGINT, bidder BIGINT, id BIGINT, seller BIGINT`,
		`INSERT INTO out SELECT B.auction, B.bidder, A.id, A.seller
		 FROM bids B JOIN auctions A ON B.auction = A.id AND A.ts BETWEEN B.ts - INTERVAL '10' SECOND AND B.ts`)})
}

func TestGroupingByOnlyTheWindowStartIsAGroupAggregationMatchingTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`window_start TIMESTAMP(3), n BIGINT, PRIMARY KEY (window_start) NOT ENFORCED`,
		`INSERT INTO out SELECT window_start, COUNT(*)
		 FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start`)})
}

// The fee of a channel changes over time: each bid joins the version
// valid at its time.
func TestAnEventTimeTemporalJoinWithVersionsMatchesTheReference(t *testing.T) {
	in := inputs(200)
	in["fees"] = []string{
		`{"channel":"apple","fee":3,"ts":1704067190000}`,
		`{"channel":"google","fee":5,"ts":1704067205000}`,
		`{"channel":"apple","fee":4,"ts":1704067230000}`,
		`{"channel":"baidu","fee":7,"ts":1704067250000}`,
		`{"channel":"google","fee":6,"ts":1704067260000}`,
		`{"channel":"baidu","fee":8,"ts":1704067280000}`,
	}
	for _, kind := range []string{"JOIN", "LEFT JOIN"} {
		t.Run(kind, func(t *testing.T) {
			checkReference(t, refCase{inputs: in, failures: true, script: script(
				`auction BIGINT, channel VARCHAR, ts TIMESTAMP(3), fee INT`,
				`CREATE TABLE fees (channel VARCHAR, fee INT, ts TIMESTAMP(3), PRIMARY KEY (channel) NOT ENFORCED,
				   WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
				 WITH ('connector' = 'filesystem', 'path' = '${fees}', 'format' = 'json')`,
				`INSERT INTO out SELECT B.auction, B.channel, B.ts, F.fee
				 FROM bids B `+kind+` fees FOR SYSTEM_TIME AS OF B.ts AS F ON B.channel = F.channel`)})
		})
	}
}
