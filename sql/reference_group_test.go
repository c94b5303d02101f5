package sql

import "testing"

// Group aggregation (a changelog), aggregation of an updating input,
// SELECT DISTINCT, and the regular and interval joins against the
// reference.

func TestGroupAggregationWithDistinctFilterAndHavingMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), failures: true, script: script(
		`auction BIGINT, n BIGINT, bidders BIGINT, apple BIGINT, total DECIMAL(38, 2), avg_price DECIMAL(38, 6),
		 lo DECIMAL(10, 2), hi DECIMAL(10, 2), avg_bidder BIGINT, avg_cents DOUBLE, PRIMARY KEY (auction) NOT ENFORCED`,
		`INSERT INTO out SELECT auction, COUNT(*), COUNT(DISTINCT bidder), COUNT(*) FILTER (WHERE channel = 'apple'),
		   SUM(price), AVG(price), MIN(price), MAX(price), AVG(bidder), AVG(CAST(cents AS DOUBLE))
		 FROM bids GROUP BY auction HAVING COUNT(*) > 10`)})
}

func TestGlobalAggregationMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), script: script(
		`n BIGINT, auctions BIGINT, total DECIMAL(38, 2), hi DECIMAL(10, 2), sum_distinct DECIMAL(38, 2)`,
		`INSERT INTO out SELECT COUNT(*), COUNT(DISTINCT auction), SUM(price), MAX(price), SUM(DISTINCT price) FILTER (WHERE bidder > 5)
		 FROM bids`)})
}

func TestAnAggregationOfAnAggregationMatchesTheReference(t *testing.T) {
	// Nexmark q4's shape: the highest bid per auction, averaged per
	// category; the inner aggregation's updates retract from the outer.
	checkReference(t, refCase{inputs: inputs(300), failures: true, script: script(
		`category INT, avg_final DECIMAL(38, 6), n BIGINT, lo DECIMAL(10, 2), hi DECIMAL(10, 2)`,
		`INSERT INTO out SELECT Q.category, AVG(Q.final), COUNT(*), MIN(Q.final), MAX(Q.final)
		 FROM (SELECT MAX(B.price) AS final, A.category
		       FROM auctions A, bids B
		       WHERE A.id = B.auction AND B.ts BETWEEN A.ts AND A.ts + INTERVAL '30' SECOND
		       GROUP BY A.id, A.category) Q
		 GROUP BY Q.category`)})
}

func TestAnAggregationOfAnUpdatingAggregationMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), failures: true, script: script(
		`n BIGINT, bidders BIGINT, lo BIGINT, hi BIGINT, total BIGINT`,
		`INSERT INTO out SELECT n, COUNT(*), MIN(bidder), MAX(bidder), SUM(bidder)
		 FROM (SELECT bidder, COUNT(*) / 10 AS n FROM bids GROUP BY bidder)
		 GROUP BY n`)})
}

func TestSelectDistinctMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), failures: true, script: script(
		`bidder BIGINT, channel VARCHAR`,
		`INSERT INTO out SELECT DISTINCT bidder, channel FROM bids`)})
}

// FIRST_VALUE and LAST_VALUE take the rows in arrival order, which
// parallel readers of the input do not fix.
func TestFirstAndLastValueMatchTheReferenceOnOneReader(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), ordered: true, script: script(
		`auction BIGINT, first_channel VARCHAR, last_channel VARCHAR`,
		`INSERT INTO out SELECT auction, FIRST_VALUE(channel), LAST_VALUE(channel) FROM bids GROUP BY auction`)})
}

func TestRegularJoinsOfEveryKindMatchTheReference(t *testing.T) {
	for _, kind := range []string{"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"} {
		t.Run(kind, func(t *testing.T) {
			checkReference(t, refCase{inputs: inputs(100), failures: kind == "FULL JOIN", script: script(
				`id BIGINT, seller BIGINT, category INT, pid BIGINT, name VARCHAR, state VARCHAR`,
				`INSERT INTO out SELECT A.id, A.seller, A.category, P.id, P.name, P.state
				 FROM auctions AS A `+kind+` persons AS P ON A.seller = P.id AND P.state <> 'WA'`)})
		})
	}
}

func TestAJoinOfAggregatesMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`auction BIGINT, n BIGINT, seller BIGINT`,
		`INSERT INTO out SELECT B.auction, B.n, A.seller
		 FROM (SELECT auction, COUNT(*) AS n FROM bids GROUP BY auction) B
		 LEFT JOIN auctions A ON B.auction = A.id`)})
}

func TestIntervalJoinMatchesTheReference(t *testing.T) {
	for _, kind := range []string{"JOIN", "LEFT JOIN"} {
		t.Run(kind, func(t *testing.T) {
			checkReference(t, refCase{inputs: inputs(200), failures: kind == "JOIN", script: script(
				`id BIGINT, itemName VARCHAR, bidder BIGINT, price DECIMAL(10, 2), bid_ts TIMESTAMP(3)`,
				`INSERT INTO out SELECT A.id, A.itemName, B.bidder, B.price, B.ts
				 FROM auctions A `+kind+` bids B
				 ON A.id = B.auction AND B.ts BETWEEN A.ts - INTERVAL '2' SECOND AND A.ts + INTERVAL '20' SECOND`)})
		})
	}
}

func TestAggregatesOfEveryArgumentTypeMatchTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(100), failures: true, script: script(
		`seller BIGINT, cat_sum INT, cat_avg INT, bid_avg DOUBLE, bid_max DOUBLE, first_item VARCHAR, last_item VARCHAR,
		 first_ts TIMESTAMP(3), last_ts TIMESTAMP(3), items BIGINT`,
		`INSERT INTO out SELECT seller, SUM(category), AVG(category), AVG(initialBid), MAX(initialBid), MIN(itemName), MAX(itemName),
		   MIN(ts), MAX(ts), COUNT(DISTINCT itemName)
		 FROM auctions GROUP BY seller`)})
}

func TestWindowAggregatesOfEveryArgumentTypeMatchTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`window_start TIMESTAMP(3), window_end TIMESTAMP(3), lo_channel VARCHAR, hi_ts TIMESTAMP(3), avg_bidder BIGINT,
		 sum_double DOUBLE, avg_price DECIMAL(38, 6)`,
		`INSERT INTO out SELECT window_start, window_end, MIN(channel), MAX(ts), AVG(bidder), SUM(CAST(price AS DOUBLE)), AVG(price)
		 FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '15' SECOND)) GROUP BY window_start, window_end`)})
}
