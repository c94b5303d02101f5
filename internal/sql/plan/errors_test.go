package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/sql/parse"
)

const errorsDDL = `CREATE TABLE t (a BIGINT, b VARCHAR, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'nexmark');
CREATE TABLE u (a BIGINT, c VARCHAR) WITH ('connector' = 'nexmark');
`

// Planning errors name the place, the identifier and what to do; what
// weir does not run is named and wraps ErrUnsupported.
func TestPlanningErrorsSayWhatAndWhere(t *testing.T) {
	for _, c := range []struct {
		sql, want   string
		unsupported bool
	}{
		{"SELECT x FROM t", "line 3, column 8: column x not found; the columns here are t.a, t.b, t.ts", false},
		{"SELECT a FROM t, u", "column a is ambiguous: it is in t and u; qualify it", false},
		{"SELECT a FROM nope", "line 3, column 15: table or view nope not found", false},
		{"SELECT a, count(*) FROM t GROUP BY b", "column a is neither in GROUP BY nor inside an aggregate", false},
		{"SELECT a FROM t WHERE b", "WHERE must be a BOOLEAN condition, not VARCHAR", false},
		{"SELECT a FROM t ORDER BY a", "ORDER BY and LIMIT on a streaming query are not supported", true},
		{"SELECT a FROM t WHERE a IN (SELECT a FROM u)", "IN (subquery) is not supported: write a join", true},
		{"SELECT RANK() OVER (PARTITION BY a ORDER BY ts) FROM t", "RANK() OVER is not supported: weir ranks with ROW_NUMBER()", true},
		{"SELECT * FROM (SELECT a, ROW_NUMBER() OVER (PARTITION BY b ORDER BY a) AS rn FROM t)", "ROW_NUMBER() rn needs a limit", true},
		{"SELECT NOW() FROM t", "NOW() is not supported: its value depends on when a row is processed", true},
		{"SELECT a FROM TABLE(TUMBLE(TABLE u, DESCRIPTOR(a), INTERVAL '1' SECOND))", "TUMBLE: column a is not a time attribute", false},
		{"SELECT a FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MONTH))", "INTERVAL ... MONTH is not supported", true},
		{"INSERT INTO u SELECT a FROM t", "INSERT INTO u: the table has 2 columns but the query has 1", false},
	} {
		stmts, err := parse.Parse(errorsDDL + c.sql)
		if err != nil {
			t.Fatalf("%s: parse: %v", c.sql, err)
		}
		cat := NewCatalog()
		cat.Aggregates = testAggregates
		_, err = Bind(stmts, cat)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got error %v\nwant one containing %q", c.sql, err, c.want)
			continue
		}
		if errors.Is(err, ErrUnsupported) != c.unsupported {
			t.Errorf("%s: errors.Is(ErrUnsupported) = %v, want %v", c.sql, !c.unsupported, c.unsupported)
		}
	}
}

// The plans of the published Nexmark queries use the strategies that
// keep their state bounded where the SQL allows it.
func TestNexmarkPlansPickTheirStrategies(t *testing.T) {
	for q, want := range map[string][]string{
		"q5":  {"strategy=[window]", "WindowAggregate(groupBy=[$auction], window=[HOP(slide=2s, size=10s)]", "windows of size 10s from the input's window_end"},
		"q8":  {"strategy=[window]", "WindowAggregate(groupBy=[$id, $name], window=[TUMBLE(size=10s)]"},
		"q11": {"window=[SESSION(gap=10s)]"},
		"q18": {"Deduplicate(keep=last, partitionBy=[bidder, auction]"},
		"q19": {"Rank(partitionBy=[auction], orderBy=[price DESC], rows=[1..10], rowNumber=[true])"},
		"q9":  {"Rank(partitionBy=[id], orderBy=[price DESC, dateTime ASC], rows=[1..1], rowNumber=[false])"},
		"q0":  {"Scan(table=[datagen], connector=[nexmark], fields=[event_type, bid.auction, bid.bidder, bid.price, bid.extra, dateTime])"},
	} {
		p, err := bindNexmark(t, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		got := Explain(p.Statements[0].Sink)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the plan has no %q:\n%s", q, w, got)
			}
		}
	}
}
