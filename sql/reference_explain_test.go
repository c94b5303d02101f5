package sql

import (
	"strings"
	"testing"
)

// optimizedPlan returns the optimized plan of a script's one statement.
func optimizedPlan(t *testing.T, text string) string {
	t.Helper()
	s, err := Parse(text, Options{Vars: map[string]string{"bids": "b", "auctions": "a", "persons": "p", "out": "o"}})
	if err != nil {
		t.Fatal(err)
	}
	_, opt, ok := strings.Cut(s.Explain(), "== Optimized plan ==\n")
	if !ok {
		t.Fatalf("no optimized plan in\n%s", s.Explain())
	}
	opt, _, _ = strings.Cut(opt, "== Warnings ==")
	return opt
}

func TestTheOptimizedPlanPicksTheStrategyFlinkWould(t *testing.T) {
	for _, c := range []struct {
		name, sink, query string
		want              []string
	}{
		{"an interval join from >= and <=", "id BIGINT, bidder BIGINT",
			`SELECT A.id, B.bidder FROM auctions A JOIN bids B ON A.id = B.auction AND B.ts >= A.ts AND B.ts <= A.ts + INTERVAL '10' SECOND`,
			[]string{"Join(strategy=[interval], kind=[INNER]", "ts - ts in [0ms, 10s]"}},
		// BETWEEN binds to an AND inside one conjunct of the ON clause.
		{"an interval join from BETWEEN", "id BIGINT, bidder BIGINT",
			`SELECT A.id, B.bidder FROM auctions A JOIN bids B ON A.id = B.auction AND B.ts BETWEEN A.ts - INTERVAL '2' SECOND AND A.ts + INTERVAL '20' SECOND`,
			[]string{"Join(strategy=[interval], kind=[INNER]", "ts - ts in [-2s, 20s]"}},
		{"an interval join from BETWEEN in WHERE", "id BIGINT, bidder BIGINT",
			`SELECT A.id, B.bidder FROM auctions A, bids B WHERE A.id = B.auction AND B.ts BETWEEN A.ts AND A.ts + INTERVAL '20' SECOND`,
			[]string{"Join(strategy=[interval], kind=[INNER]", "ts - ts in [0ms, 20s]"}},
		{"a window join", "auction BIGINT, seller BIGINT",
			`SELECT B.auction, A.seller
			 FROM (SELECT * FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))) B
			 JOIN (SELECT * FROM TABLE(TUMBLE(TABLE auctions, DESCRIPTOR(ts), INTERVAL '10' SECOND))) A
			 ON B.auction = A.id AND B.window_start = A.window_start AND B.window_end = A.window_end`,
			[]string{"Join(strategy=[window], kind=[INNER]"}},
		{"a window aggregation of a window table function", "bidder BIGINT, n BIGINT",
			`SELECT bidder, COUNT(*) FROM TABLE(HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND))
			 GROUP BY bidder, window_start, window_end`,
			[]string{"WindowAggregate(groupBy=[", "window=[HOP(slide=5s, size=15s)]"}},
		{"a window aggregation of a group window", "bidder BIGINT, n BIGINT",
			`SELECT bidder, COUNT(*) FROM bids GROUP BY bidder, SESSION(ts, INTERVAL '3' SECOND)`,
			[]string{"WindowAggregate(groupBy=[", "window=[SESSION(gap=3s)]"}},
		{"a deduplication keeping the first row", "bidder BIGINT, auction BIGINT",
			`SELECT bidder, auction FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder ORDER BY ts) AS rn FROM bids) WHERE rn = 1`,
			// A row with an earlier rowtime arriving later replaces the
			// kept one: the output updates.
			[]string{"Deduplicate(keep=first, partitionBy=[bidder], orderBy=[ts ASC]) [I,UB,UA"}},
		{"a deduplication keeping the last row", "bidder BIGINT, auction BIGINT",
			`SELECT bidder, auction FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder ORDER BY ts DESC) AS rn FROM bids) WHERE rn = 1`,
			[]string{"Deduplicate(keep=last, partitionBy=[bidder], orderBy=[ts DESC])"}},
		// Flink's window deduplication: append-only, one row per window.
		{"a deduplication within windows as a window TopN", "bidder BIGINT, auction BIGINT",
			`SELECT bidder, auction FROM (
			   SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, bidder ORDER BY ts DESC) AS rn
			   FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)))
			 WHERE rn = 1`,
			[]string{"WindowRank(partitionBy=[window_start, window_end, bidder], orderBy=[ts DESC], rows=[1..1], rowNumber=[false]) [I]"}},
		{"a TopN with its limit folded in", "auction BIGINT, price DECIMAL(10, 2)",
			`SELECT auction, price FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rn FROM bids) WHERE rn <= 3`,
			[]string{"Rank(partitionBy=[auction], orderBy=[price DESC], rows=[1..3], rowNumber=[false])"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := optimizedPlan(t, script(c.sink, "INSERT INTO out "+c.query))
			for _, w := range c.want {
				if !strings.Contains(plan, w) {
					t.Errorf("the optimized plan has no %q:\n%s", w, plan)
				}
			}
		})
	}
}
