package parse_test

import (
	"testing"

	"github.com/weir-stream/weir/internal/sql/ast"
	"github.com/weir-stream/weir/internal/sql/parse"
)

// grouped prints an expression with every operator application in
// parentheses, to show how the parser grouped it.
func grouped(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Binary:
		return "(" + grouped(e.L) + " " + e.Op + " " + grouped(e.R) + ")"
	case *ast.Unary:
		if e.Op == "NOT" {
			return "(NOT " + grouped(e.X) + ")"
		}
		return "(" + e.Op + grouped(e.X) + ")"
	case *ast.Is:
		not := ""
		if e.Not {
			not = "NOT "
		}
		return "(" + grouped(e.X) + " IS " + not + e.What + ")"
	case *ast.Between:
		return "(" + grouped(e.X) + " BETWEEN " + grouped(e.Lo) + " AND " + grouped(e.Hi) + ")"
	case *ast.Like:
		return "(" + grouped(e.X) + " LIKE " + grouped(e.Pattern) + ")"
	case *ast.In:
		return "(" + grouped(e.X) + " " + e.String()[len(e.X.String())+1:] + ")"
	}
	return e.String()
}

func TestExpressionsGroupByFlinkPrecedence(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1 + 2 * 3", "(1 + (2 * 3))"},
		{"1 - 2 - 3", "((1 - 2) - 3)"},
		{"a || b || c", "((a || b) || c)"},
		{"a + b || c", "(a + (b || c))"},
		{"-a * b", "((-a) * b)"},
		{"- - a", "(-(-a))"},
		{"a % 2 = 0", "((a % 2) = 0)"},
		{"a = 1 AND b = 2 OR c = 3", "(((a = 1) AND (b = 2)) OR (c = 3))"},
		{"a OR b AND c", "(a OR (b AND c))"},
		{"NOT a = b", "(NOT (a = b))"},
		{"NOT a AND b", "((NOT a) AND b)"},
		{"a = b IS NULL", "((a = b) IS NULL)"},
		{"x IS NOT NULL OR y", "((x IS NOT NULL) OR y)"},
		{"x BETWEEN a - 1 AND b AND c", "((x BETWEEN (a - 1) AND b) AND c)"},
		{"x LIKE 'a%' AND y", "((x LIKE 'a%') AND y)"},
		{"x IN (1, 2) OR y", "((x IN (1, 2)) OR y)"},
		{"a <> b", "(a <> b)"},
		{"a != b", "(a != b)"},
		{"a IS DISTINCT FROM b AND c", "((a IS DISTINCT FROM b) AND c)"},
		{"`dateTime` - INTERVAL '4' SECOND", "(`dateTime` - INTERVAL '4' SECOND)"},
		{"(a + b) * c", "((a + b) * c)"},
		{"arr[1] + 1", "(arr[1] + 1)"},
	} {
		e, err := parse.ParseExpr(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got := grouped(e); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, got, tc.want)
		}
		checkRoundTrip(t, tc.in, e)
	}
}

// checkRoundTrip checks that the printed form of e parses to the same
// tree.
func checkRoundTrip(t *testing.T, in string, e ast.Expr) {
	t.Helper()
	again, err := parse.ParseExpr(e.String())
	if err != nil {
		t.Errorf("%s: printed as %s, which does not parse: %v", in, e, err)
		return
	}
	if ast.Dump(again) != ast.Dump(e) {
		t.Errorf("%s: printed as %s, which parses to\n%s\nnot\n%s", in, e, ast.Dump(again), ast.Dump(e))
	}
}

func TestExpressionForms(t *testing.T) {
	// Each input prints back as want (keywords in upper case, minimal
	// parentheses) and parses again to the same tree.
	for _, tc := range []struct{ in, want string }{
		{"42", "42"},
		{"0.908 * price", "0.908 * price"},
		{".5e-3", ".5e-3"},
		{"'it''s'", "'it''s'"},
		{"true AND false OR null", "TRUE AND FALSE OR NULL"},
		{"interval '10' second", "INTERVAL '10' SECOND"},
		{"INTERVAL '1' MINUTE", "INTERVAL '1' MINUTE"},
		{"INTERVAL '5' MINUTES", "INTERVAL '5' MINUTES"},
		{"INTERVAL '1:30' HOUR TO MINUTE", "INTERVAL '1:30' HOUR TO MINUTE"},
		{"INTERVAL -'1' DAY", "INTERVAL -'1' DAY"},
		{"TIMESTAMP '2020-01-01 00:00:00'", "TIMESTAMP '2020-01-01 00:00:00'"},
		{"date '2020-01-01'", "DATE '2020-01-01'"},
		{"TIME '10:00:00'", "TIME '10:00:00'"},
		{"`dateTime`", "`dateTime`"},
		{"`select`", "`select`"},
		{"`a``b`", "`a``b`"},
		{"person.id", "person.id"},
		{"t.person.`dateTime`", "t.person.`dateTime`"},
		{"count(*)", "count(*)"},
		{"COUNT(DISTINCT bidder)", "COUNT(DISTINCT bidder)"},
		{"count(distinct auction) filter (where price >= 10000 and price < 1000000)",
			"count(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000)"},
		{"cast(price AS DECIMAL(23, 3))", "CAST(price AS DECIMAL(23, 3))"},
		{"TRY_CAST(s AS INT)", "TRY_CAST(s AS INT)"},
		{"CAST(x AS TIMESTAMP(3) WITH LOCAL TIME ZONE)", "CAST(x AS TIMESTAMP(3) WITH LOCAL TIME ZONE)"},
		{"CASE WHEN a = 0 THEN 'x' WHEN a = 1 THEN 'y' ELSE 'z' END", "CASE WHEN a = 0 THEN 'x' WHEN a = 1 THEN 'y' ELSE 'z' END"},
		{"case event_type when 0 then 'p' end", "CASE event_type WHEN 0 THEN 'p' END"},
		{"x not between 1 and 10", "x NOT BETWEEN 1 AND 10"},
		{"x not in ('a', 'b')", "x NOT IN ('a', 'b')"},
		{"x IN (SELECT id FROM t)", "x IN (SELECT id FROM t)"},
		{"url not like '%x%' escape '!'", "url NOT LIKE '%x%' ESCAPE '!'"},
		{"EXISTS (SELECT 1 FROM t WHERE t.a = b)", "EXISTS (SELECT 1 FROM t WHERE t.a = b)"},
		{"(SELECT max(price) FROM bid)", "(SELECT max(price) FROM bid)"},
		{"a IS NOT TRUE", "a IS NOT TRUE"},
		{"a IS NOT DISTINCT FROM b", "a IS NOT DISTINCT FROM b"},
		{"EXTRACT(hour FROM `dateTime`)", "EXTRACT(HOUR FROM `dateTime`)"},
		{"PROCTIME()", "PROCTIME()"},
		{"CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP"},
		{"mod(auction, 123) = 0", "mod(auction, 123) = 0"},
		{"LEFT(s, 3)", "LEFT(s, 3)"},
		{"TUMBLE(`dateTime`, INTERVAL '10' SECOND)", "TUMBLE(`dateTime`, INTERVAL '10' SECOND)"},
		{"ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY `dateTime` DESC)",
			"ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY `dateTime` DESC)"},
		{"AVG(price) OVER (PARTITION BY seller ORDER BY t ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)",
			"AVG(price) OVER (PARTITION BY seller ORDER BY t ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)"},
		{"sum(x) over (order by t asc nulls last range between interval '1' hour preceding and current row)",
			"sum(x) OVER (ORDER BY t ASC NULLS LAST RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW)"},
		{"sum(x) OVER (ROWS UNBOUNDED PRECEDING)", "sum(x) OVER (ROWS UNBOUNDED PRECEDING)"},
		{"sum(x) OVER w", "sum(x) OVER w"},
		{"ROW(a, 1)", "ROW(a, 1)"},
		{"ARRAY[1, 2][1]", "ARRAY[1, 2][1]"},
		{"MAP['k', v]", "MAP['k', v]"},
		{"a - -1", "a - -1"},
		{"a - (b - c)", "a - (b - c)"},
		{"NOT (a AND b)", "NOT (a AND b)"},
		{"(a = b) = c", "a = b = c"},
		{"a = (b = c)", "a = (b = c)"},
		{"(x BETWEEN 1 AND 2) BETWEEN a AND b", "x BETWEEN 1 AND 2 BETWEEN a AND b"},
		{"x BETWEEN (a BETWEEN 1 AND 2) AND b", "x BETWEEN (a BETWEEN 1 AND 2) AND b"},
		{"a || 'x'", "a || 'x'"},
	} {
		e, err := parse.ParseExpr(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got := e.String(); got != tc.want {
			t.Errorf("%s: printed %s, want %s", tc.in, got, tc.want)
		}
		checkRoundTrip(t, tc.in, e)
	}
}
