package parse_test

import (
	"errors"
	"testing"

	"github.com/weir-stream/weir/internal/sql/parse"
)

func TestErrorsNameWhatWasFoundAndExpected(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// The window table function's TABLE( is not closed.
		{"SELECT *\nFROM TABLE(\n  TUMBLE(TABLE bid, DESCRIPTOR(ts), INTERVAL '10' SECOND)\nGROUP BY a",
			"line 4, column 1: expected ')' to close TABLE( after the window's arguments, found 'GROUP'"},
		{"SELECT * FROM TABLE(my_func(x) WHERE",
			"line 1, column 32: expected ')' to close TABLE( after the arguments of my_func, found 'WHERE'"},
		{"SELECT * FROM TABLE(bid)",
			"line 1, column 21: expected a function call inside TABLE(...), found bid"},
		{"SELECT a FROM t WHERE",
			"line 1, column 22: expected an expression, found the end of the input"},
		{"SELECT a,\n  FROM t",
			"line 2, column 3: expected an expression, found 'FROM'"},
		{"SELECT a FROM t\nWHERE b = 1 c",
			"line 2, column 13: expected ';' or the end of the input after the statement, found identifier c"},
		{"SELECT count(* FROM t",
			"line 1, column 16: expected ')' after the arguments of count, found 'FROM'"},
		{"SELECT (a + b FROM t",
			"line 1, column 15: expected ')' to close the '(' of line 1, column 8, found 'FROM'"},
		{"SELECT CASE WHEN a THEN b FROM t",
			"line 1, column 27: expected 'END' to end the CASE of line 1, found 'FROM'"},
		{"SELECT INTERVAL 10 SECOND",
			"line 1, column 17: expected a quoted value after INTERVAL (as in INTERVAL '10' SECOND), found number 10"},
		{"SELECT INTERVAL '10' SECCOND",
			"line 1, column 22: expected a unit of the interval (SECOND, MINUTE, HOUR, DAY, MONTH, YEAR, ...), found identifier SECCOND"},
		{"SELECT x FROM select",
			"line 1, column 15: expected a table name, found 'SELECT' (a reserved word: write `select` in backquotes to use it as a name)"},
		{"SELECT a FROM t JOIN u WHERE x",
			"line 1, column 24: expected ON or USING after the table joined by JOIN, found 'WHERE'"},
		{"SELECT a FROM t LEFT u ON x",
			"line 1, column 22: expected 'JOIN' after LEFT, found identifier u"},
		{"SELECT a FROM t FOR SYSTEM_TIME x",
			"line 1, column 33: expected AS OF after FOR SYSTEM_TIME, found identifier x"},
		{"SELECT a IS 3",
			"line 1, column 13: expected NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM after IS, found number 3"},
		{"SELECT a BETWEEN 1 OR 2",
			"line 1, column 20: expected 'AND' in BETWEEN ... AND ..., found 'OR'"},
		{"SELECT a IN 1",
			"line 1, column 13: expected '(' after IN, found number 1"},
		{"SELECT f(x) OVER (PARTITION BY a ROWS 3)",
			"line 1, column 40: expected PRECEDING or FOLLOWING after the frame's offset, found ')'"},
		{"SELECT CAST(a INT)",
			"line 1, column 15: expected 'AS' in CAST(value AS type), found identifier INT"},
		{"SELECT CAST(a AS)",
			"line 1, column 17: expected a type to cast to, found ')'"},
		{"SELECT 'abc",
			"line 1, column 8: string starting here is not closed by '"},
		{"SELECT `abc",
			"line 1, column 8: quoted identifier starting here is not closed by `"},
		{"SELECT \"a\" FROM t",
			"line 1, column 8: double quotes are not used in Flink SQL: quote identifiers in backquotes (`name`) and strings in single quotes ('text')"},
		{"SELECT a /* no end",
			"line 1, column 10: comment /* is not closed by */"},
		{"SELECT 12abc",
			"line 1, column 8: malformed number 12abc"},
		{"SELECT a # b",
			"line 1, column 10: unexpected character \"#\""},
		{"SELECT * FROM ${NEXMARK_TABLE}",
			"line 1, column 15: unsubstituted placeholder ${NEXMARK_TABLE}: replace it before parsing (parse.Substitute)"},
		{"SELEC a FROM t",
			"line 1, column 1: expected a statement (CREATE, INSERT, SELECT, WITH, VALUES, SET, RESET or EXPLAIN), found identifier SELEC"},
		{"INSERT t SELECT 1",
			"line 1, column 8: expected INTO or OVERWRITE after INSERT, found identifier t"},
		{"CREATE INDEX i",
			"line 1, column 8: expected TABLE, VIEW or FUNCTION after CREATE, found identifier INDEX"},
		{"CREATE FUNCTION f AS com.x.F",
			"line 1, column 22: expected the function's class name in quotes, found identifier com"},
		{"CREATE VIEW v SELECT 1",
			"line 1, column 15: expected 'AS' before the view's query, found 'SELECT'"},
		// DDL.
		{"CREATE TABLE t (\n  a BIGINT,\n  b\n) WITH ('a' = 'b')",
			"line 4, column 1: expected a type for the column b, found ')'"},
		{"CREATE TABLE t (a BIGINT b INT)",
			"line 1, column 26: expected ',' or ')' after the definition in CREATE TABLE t, found identifier b"},
		{"CREATE TABLE t (a BIGINT, PRIMARY KEY (a)) WITH ('a' = 'b')",
			"line 1, column 42: expected NOT ENFORCED after the primary key (Flink does not enforce primary keys), found ')'"},
		{"CREATE TABLE t (a BIGINT, PRIMARY KEY (a) NOT ENFORCED, PRIMARY KEY (a) NOT ENFORCED)",
			"line 1, column 57: a table has one primary key; t defines a second one"},
		{"CREATE TABLE t (a BIGINT) WITH (connector = 'x')",
			"line 1, column 33: expected a quoted option key in WITH (as in 'key' = 'value'), found identifier connector"},
		{"CREATE TABLE t (a BIGINT) WITH ('connector' 'x')",
			"line 1, column 45: expected '=' after the option key 'connector', found string 'x'"},
		{"CREATE TABLE t (a BIGINT) WITH ('n' = 1)",
			"line 1, column 39: expected a quoted value for the option 'n', found number 1"},
		{"CREATE TABLE t (a BIGINT) WITH ('a' = 'b' 'c' = 'd')",
			"line 1, column 43: expected ',' or ')' after the option 'a', found string 'c'"},
		{"CREATE TABLE t (p ROW<a BIGINT b INT>)",
			"line 1, column 32: expected ',' or '>' after the field a of ROW, found identifier b"},
		{"CREATE TABLE t (d DECIMAL(a))",
			"line 1, column 27: expected an integer parameter of DECIMAL, found identifier a"},
		{"CREATE TABLE t (m MAP<INT>)",
			"line 1, column 26: expected ',' after the key type of MAP, found '>'"},
		{"CREATE TABLE t (WATERMARK FOR ts ts - INTERVAL '1' SECOND)",
			"line 1, column 34: expected 'AS' before the watermark's expression, found identifier ts"},
		// Recognised, not supported.
		{"DROP TABLE t", "line 1, column 1: the statement DROP TABLE is not supported"},
		{"SHOW TABLES", "line 1, column 1: the statement SHOW TABLES is not supported"},
		{"CREATE CATALOG c WITH ()", "line 1, column 8: CREATE CATALOG is not supported"},
		{"SELECT * FROM a NATURAL JOIN b", "line 1, column 17: NATURAL JOIN is not supported"},
		{"SELECT * FROM t MATCH_RECOGNIZE (x)", "line 1, column 17: MATCH_RECOGNIZE is not supported"},
		{"SELECT * FROM t CROSS JOIN UNNEST(t.arr)", "line 1, column 28: UNNEST is not supported"},
		{"SELECT a FROM t GROUP BY GROUPING SETS ((a))", "line 1, column 26: GROUP BY GROUPING is not supported"},
		{"SELECT a FROM t GROUP BY ROLLUP (a)", "line 1, column 26: GROUP BY ROLLUP is not supported"},
		{"SELECT sum(a) OVER w FROM t WINDOW w AS (ORDER BY ts)", "line 1, column 29: the WINDOW clause is not supported"},
		{"SELECT a FROM t FETCH FIRST 1 ROWS ONLY", "line 1, column 17: FETCH FIRST; use LIMIT is not supported"},
		{"SELECT SUBSTRING(s FROM 1 FOR 2)", "line 1, column 20: the form SUBSTRING(... FROM ...); call it with arguments separated by commas is not supported"},
		{"SELECT a SIMILAR TO 'x'", "line 1, column 10: SIMILAR TO is not supported"},
		{"WITH RECURSIVE x AS (SELECT 1) SELECT 1", "line 1, column 6: WITH RECURSIVE is not supported"},
		{"SELECT listagg(x) WITHIN GROUP (ORDER BY y)", "line 1, column 19: WITHIN GROUP is not supported"},
		{"SELECT a FROM t WHERE a = ?", "line 1, column 27: a parameter marker ? is not supported"},
		{"SELECT (a, b) FROM t", "line 1, column 10: a row written as (a, b); write ROW(a, b) is not supported"},
		{"CREATE TABLE t (i INTERVAL DAY)", "line 1, column 19: the INTERVAL type is not supported"},
		{"CREATE TABLE t (a INT) LIKE s", "line 1, column 24: CREATE TABLE ... LIKE is not supported"},
		{"SELECT * FROM t TABLESAMPLE BERNOULLI(10)", "line 1, column 17: TABLESAMPLE is not supported"},
		{"SELECT * FROM t /*+ OPTIONS('a' = 'b') */", "line 1, column 17: hints (/*+ ... */) are not supported"},
	} {
		_, err := parse.Parse(tc.in)
		var perr *parse.Error
		if !errors.As(err, &perr) {
			t.Errorf("%s: got %v (%T), want a *parse.Error", tc.in, err, err)
			continue
		}
		if got := err.Error(); got != tc.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func TestDeepNestingIsAnErrorNotACrash(t *testing.T) {
	deep := "SELECT "
	for range 5000 {
		deep += "("
	}
	_, err := parse.Parse(deep + "1")
	var perr *parse.Error
	if !errors.As(err, &perr) {
		t.Fatalf("got %v, want a *parse.Error", err)
	}
}
