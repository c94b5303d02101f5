package sql

import (
	"strings"
	"testing"
)

// ROW_NUMBER TopN and deduplication, UNION ALL, VALUES, WITH, views and
// functions registered from Go against the reference.

func TestTopNWithTheRowNumberMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), failures: true, script: script(
		`auction BIGINT, bidder BIGINT, price DECIMAL(10, 2), rownum BIGINT`,
		`INSERT INTO out SELECT auction, bidder, price, rownum FROM (
		   SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC, ts) AS rownum FROM bids)
		 WHERE rownum <= 3`)})
}

func TestTopNWithoutTheRowNumberMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`auction BIGINT, bidder BIGINT, price DECIMAL(10, 2)`,
		`INSERT INTO out SELECT auction, bidder, price FROM (
		   SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price ASC, ts DESC) AS rownum FROM bids)
		 WHERE rownum <= 2`)})
}

func TestTopNOfARangeOfRowNumbersMatchesTheReference(t *testing.T) {
	for name, where := range map[string]string{"between": "rownum BETWEEN 2 AND 4", "greater and less": "rownum > 1 AND rownum < 4"} {
		t.Run(name, func(t *testing.T) {
			checkReference(t, refCase{inputs: inputs(200), script: script(
				`channel VARCHAR, bidder BIGINT, ts TIMESTAMP(3), rownum BIGINT`,
				`INSERT INTO out SELECT channel, bidder, ts, rownum FROM (
				   SELECT *, ROW_NUMBER() OVER (PARTITION BY channel ORDER BY ts DESC) AS rownum FROM bids)
				 WHERE `+where)})
		})
	}
}

func TestTopNOverAnUpdatingAggregationMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), failures: true, script: script(
		`auction BIGINT, n BIGINT, rownum BIGINT`,
		`INSERT INTO out SELECT auction, n, rownum FROM (
		   SELECT *, ROW_NUMBER() OVER (ORDER BY n DESC, auction) AS rownum
		   FROM (SELECT auction, COUNT(*) AS n FROM bids GROUP BY auction))
		 WHERE rownum <= 5`)})
}

func TestDeduplicationKeepingTheFirstOrTheLastRowMatchesTheReference(t *testing.T) {
	for name, order := range map[string]string{"first": "ts ASC", "last": "ts DESC"} {
		t.Run(name, func(t *testing.T) {
			checkReference(t, refCase{inputs: inputs(200), failures: true, script: script(
				`bidder BIGINT, auction BIGINT, ts TIMESTAMP(3)`,
				`INSERT INTO out SELECT bidder, auction, ts FROM (
				   SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder ORDER BY `+order+`) AS rownum FROM bids)
				 WHERE rownum = 1`)})
		})
	}
}

func TestUnionAllValuesWithAndViewsMatchTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(100), script: script(
		`who VARCHAR, id BIGINT, label VARCHAR`,
		`CREATE VIEW sellers AS SELECT seller AS id, itemName AS label FROM auctions WHERE category <> 2`,
		`INSERT INTO out
		 WITH cheap AS (SELECT bidder AS id, channel AS label FROM bids WHERE price < 30),
		      named AS (SELECT id, name AS label FROM persons)
		 SELECT 'bid', id, label FROM cheap
		 UNION ALL SELECT 'person', id, label FROM named
		 UNION ALL SELECT 'seller', id, label FROM sellers
		 UNION ALL SELECT * FROM (VALUES ('const', CAST(1 AS BIGINT), 'one'), ('const', CAST(2 AS BIGINT), CAST(NULL AS VARCHAR)))`)})
}

func TestAScalarFunctionRegisteredFromGoMatchesTheReference(t *testing.T) {
	registerOnce(t, "ref_domain", func(url string, n int64) string {
		host, _, _ := strings.Cut(strings.TrimPrefix(url, "https://"), "/")
		return host + "#" + strings.Repeat("x", int(n%4))
	})
	checkReference(t, refCase{inputs: inputs(100), script: script(
		`auction BIGINT, d VARCHAR`,
		`INSERT INTO out SELECT auction, ref_domain(url, bidder) FROM bids WHERE ref_domain(url, auction) LIKE '%xx%'`)})
}

// registerOnce registers fn under name unless a run of the test (with
// -count) already has.
func registerOnce(t *testing.T, name string, fn any) {
	t.Helper()
	if err := RegisterFunction(name, fn); err != nil && !strings.Contains(err.Error(), "registered twice") {
		t.Fatal(err)
	}
}

func TestARangeOfATopNOverAnUpdatingInputMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), failures: true, script: script(
		`channel VARCHAR, bidder BIGINT, n BIGINT, rn BIGINT`,
		`INSERT INTO out SELECT channel, bidder, n, rn FROM (
		   SELECT *, ROW_NUMBER() OVER (PARTITION BY channel ORDER BY n DESC, bidder) AS rn
		   FROM (SELECT channel, bidder, COUNT(*) AS n FROM bids GROUP BY channel, bidder))
		 WHERE rn BETWEEN 2 AND 3`)})
}

func TestATopNOfTheLastRowPerKeyMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), failures: true, script: script(
		`bidder BIGINT, price DECIMAL(10, 2), rn BIGINT`,
		`INSERT INTO out SELECT bidder, price, rn FROM (
		   SELECT *, ROW_NUMBER() OVER (ORDER BY price DESC, bidder) AS rn FROM (
		     SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder ORDER BY ts DESC) AS last FROM bids)
		     WHERE last = 1 AND price IS NOT NULL))
		 WHERE rn <= 4`)})
}

func TestATopNOfATopNMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(300), script: script(
		`auction BIGINT, price DECIMAL(10, 2), rn BIGINT`,
		`INSERT INTO out SELECT auction, price, rn FROM (
		   SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price ASC, ts) AS rn FROM (
		     SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC, ts) AS top FROM bids)
		     WHERE top <= 5))
		 WHERE rn <= 2`)})
}

func TestTopNWithExplicitNullOrderingMatchesTheReference(t *testing.T) {
	for _, o := range []string{"price DESC NULLS LAST", "price ASC NULLS LAST", "price DESC NULLS FIRST"} {
		t.Run(o, func(t *testing.T) {
			checkReference(t, refCase{inputs: inputs(200), script: script(
				`auction BIGINT, price DECIMAL(10, 2), rn BIGINT`,
				`INSERT INTO out SELECT auction, price, rn FROM (
				   SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY `+o+`, ts) AS rn FROM bids)
				 WHERE rn <= 2`)})
		})
	}
}
