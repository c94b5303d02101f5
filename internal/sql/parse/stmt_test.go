package parse_test

import (
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/sql/ast"
	"github.com/weir-stream/weir/internal/sql/parse"
)

// checkStatement parses in as one statement, checks that it prints as
// want and that the print parses to the same tree, and returns it.
func checkStatement(t *testing.T, in, want string) ast.Stmt {
	t.Helper()
	s, err := parse.ParseStatement(in)
	if err != nil {
		t.Errorf("%s: %v", in, err)
		return nil
	}
	if got := s.String(); got != want {
		t.Errorf("%s:\nprinted %s\nwant    %s", in, got, want)
	}
	again, err := parse.ParseStatement(s.String())
	if err != nil {
		t.Errorf("%s: printed as %s, which does not parse: %v", in, s, err)
	} else if ast.Dump(again) != ast.Dump(s) {
		t.Errorf("%s: printed as %s, which parses to\n%s\nnot\n%s", in, s, ast.Dump(again), ast.Dump(s))
	}
	return s
}

func TestCreateTable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"create table t (a bigint, b varchar) with ('connector' = 'blackhole')",
			"CREATE TABLE t (a BIGINT, b VARCHAR) WITH ('connector' = 'blackhole')"},
		{"CREATE TEMPORARY TABLE IF NOT EXISTS cat.db.t (a INT NOT NULL) WITH ()",
			"CREATE TEMPORARY TABLE IF NOT EXISTS cat.db.t (a INT NOT NULL) WITH ()"},
		{"CREATE TABLE t (p ROW<id BIGINT, `dateTime` TIMESTAMP(3)>, d DECIMAL(23, 3), m MAP<STRING, ARRAY<INT>>, r ROW(x INT 'the x'), s MULTISET<STRING>) WITH ('a' = 'b')",
			"CREATE TABLE t (p ROW<id BIGINT, `dateTime` TIMESTAMP(3)>, d DECIMAL(23, 3), m MAP<STRING, ARRAY<INT>>, r ROW(x INT 'the x'), s MULTISET<STRING>) WITH ('a' = 'b')"},
		{"CREATE TABLE t (x DOUBLE PRECISION, y CHARACTER VARYING(10), z TIMESTAMP_LTZ(3), w TIMESTAMP WITHOUT TIME ZONE) WITH ('a' = 'b')",
			"CREATE TABLE t (x DOUBLE PRECISION, y CHARACTER VARYING(10), z TIMESTAMP_LTZ(3), w TIMESTAMP WITHOUT TIME ZONE) WITH ('a' = 'b')"},
		{"CREATE TABLE t (a BIGINT, ts AS TO_TIMESTAMP(s), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('a' = 'b')",
			"CREATE TABLE t (a BIGINT, ts AS TO_TIMESTAMP(s), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('a' = 'b')"},
		{"CREATE TABLE k (`offset` BIGINT METADATA VIRTUAL, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', h MAP<STRING, BYTES> METADATA) WITH ('connector' = 'kafka')",
			"CREATE TABLE k (`offset` BIGINT METADATA VIRTUAL, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', h MAP<STRING, BYTES> METADATA) WITH ('connector' = 'kafka')"},
		{"CREATE TABLE t (a BIGINT, b INT, PRIMARY KEY (a, b) NOT ENFORCED) WITH ('a' = 'b')",
			"CREATE TABLE t (a BIGINT, b INT, PRIMARY KEY (a, b) NOT ENFORCED) WITH ('a' = 'b')"},
		{"CREATE TABLE t (a BIGINT, CONSTRAINT pk PRIMARY KEY (a) NOT ENFORCED) WITH ('a' = 'b')",
			"CREATE TABLE t (a BIGINT, CONSTRAINT pk PRIMARY KEY (a) NOT ENFORCED) WITH ('a' = 'b')"},
		{"CREATE TABLE t (a BIGINT PRIMARY KEY NOT ENFORCED COMMENT 'id') COMMENT 'the table' PARTITIONED BY (a) WITH ('a' = 'b')",
			"CREATE TABLE t (a BIGINT PRIMARY KEY NOT ENFORCED COMMENT 'id') COMMENT 'the table' PARTITIONED BY (a) WITH ('a' = 'b')"},
		{"CREATE TABLE t WITH ('connector' = 'blackhole') AS SELECT * FROM bid",
			"CREATE TABLE t WITH ('connector' = 'blackhole') AS SELECT * FROM bid"},
		{"CREATE TABLE t (`key` BIGINT, `value` VARCHAR, final BIGINT, state VARCHAR) WITH ('k' = 'it''s')",
			"CREATE TABLE t (`key` BIGINT, `value` VARCHAR, final BIGINT, state VARCHAR) WITH ('k' = 'it''s')"},
	} {
		checkStatement(t, tc.in, tc.want)
	}
}

func TestCreateTableColumnKinds(t *testing.T) {
	s := checkStatement(t,
		"CREATE TABLE t (a INT, b AS a + 1, c STRING METADATA FROM 'k' VIRTUAL, WATERMARK FOR b AS b)",
		"CREATE TABLE t (a INT, b AS a + 1, c STRING METADATA FROM 'k' VIRTUAL, WATERMARK FOR b AS b)")
	ct, ok := s.(*ast.CreateTable)
	if !ok {
		t.Fatalf("got %T, want *ast.CreateTable", s)
	}
	var kinds []string
	for _, c := range ct.Columns {
		kinds = append(kinds, c.Kind.String())
	}
	if got, want := strings.Join(kinds, " "), "physical computed metadata"; got != want {
		t.Errorf("column kinds %s, want %s", got, want)
	}
	if c := ct.Columns[2]; c.MetadataKey == nil || *c.MetadataKey != "k" || !c.Virtual {
		t.Errorf("metadata column %s: key or VIRTUAL lost", ast.Dump(c))
	}
	if len(ct.Watermarks) != 1 || ct.Watermarks[0].Column.String() != "b" {
		t.Errorf("watermarks %s", ast.Dump(ct.Watermarks))
	}
}

func TestOtherStatements(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"CREATE VIEW B AS SELECT *, PROCTIME() as p_time FROM bid",
			"CREATE VIEW B AS SELECT *, PROCTIME() AS p_time FROM bid"},
		{"CREATE TEMPORARY VIEW IF NOT EXISTS v (a, b) AS SELECT x, y FROM t",
			"CREATE TEMPORARY VIEW IF NOT EXISTS v (a, b) AS SELECT x, y FROM t"},
		{"CREATE FUNCTION count_char AS 'com.github.nexmark.flink.udf.CountChar'",
			"CREATE FUNCTION count_char AS 'com.github.nexmark.flink.udf.CountChar'"},
		{"create temporary system function if not exists f as 'a.B' language java",
			"CREATE TEMPORARY SYSTEM FUNCTION IF NOT EXISTS f AS 'a.B' LANGUAGE JAVA"},
		{"INSERT INTO nexmark_q0 SELECT auction, bidder FROM bid",
			"INSERT INTO nexmark_q0 SELECT auction, bidder FROM bid"},
		{"INSERT INTO t (a, b) SELECT 1, 2", "INSERT INTO t (a, b) SELECT 1, 2"},
		{"INSERT INTO t (SELECT 1)", "INSERT INTO t SELECT 1"},
		{"INSERT OVERWRITE t VALUES (1, 'a'), (2, 'b')", "INSERT OVERWRITE t VALUES (1, 'a'), (2, 'b')"},
		{"SET 'table.exec.mini-batch.enabled' = 'true';", "SET 'table.exec.mini-batch.enabled' = 'true'"},
		{"SET", "SET"},
		{"RESET 'a.b'", "RESET 'a.b'"},
		{"RESET", "RESET"},
		{"EXPLAIN SELECT 1", "EXPLAIN SELECT 1"},
		{"EXPLAIN PLAN FOR INSERT INTO t SELECT 1", "EXPLAIN PLAN FOR INSERT INTO t SELECT 1"},
		{"explain changelog_mode, estimated_cost select a from t", "EXPLAIN CHANGELOG_MODE, ESTIMATED_COST SELECT a FROM t"},
	} {
		checkStatement(t, tc.in, tc.want)
	}
}

func TestQueries(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"select distinct a, b AS c, d e, t.*, * from t", "SELECT DISTINCT a, b AS c, d AS e, t.*, * FROM t"},
		{"SELECT a FROM t WHERE a > 1 GROUP BY a HAVING count(*) > 2 ORDER BY a DESC LIMIT 10",
			"SELECT a FROM t WHERE a > 1 GROUP BY a HAVING count(*) > 2 ORDER BY a DESC LIMIT 10"},
		{"SELECT a FROM t LIMIT 10 OFFSET 5", "SELECT a FROM t LIMIT 10 OFFSET 5"},
		{"WITH x AS (SELECT 1 AS a), y (b) AS (SELECT a FROM x) SELECT * FROM y",
			"WITH x AS (SELECT 1 AS a), y (b) AS (SELECT a FROM x) SELECT * FROM y"},
		{"SELECT a FROM t UNION ALL SELECT b FROM u UNION SELECT c FROM v",
			"SELECT a FROM t UNION ALL SELECT b FROM u UNION SELECT c FROM v"},
		{"SELECT a FROM t UNION ALL (SELECT b FROM u UNION SELECT c FROM v)",
			"SELECT a FROM t UNION ALL (SELECT b FROM u UNION SELECT c FROM v)"},
		{"(SELECT a FROM t UNION SELECT b FROM u) INTERSECT SELECT c FROM v",
			"(SELECT a FROM t UNION SELECT b FROM u) INTERSECT SELECT c FROM v"},
		{"SELECT a FROM t EXCEPT SELECT b FROM u INTERSECT SELECT c FROM v",
			"SELECT a FROM t EXCEPT SELECT b FROM u INTERSECT SELECT c FROM v"},
		{"(SELECT a FROM t ORDER BY a LIMIT 1) UNION ALL SELECT b FROM u",
			"(SELECT a FROM t ORDER BY a LIMIT 1) UNION ALL SELECT b FROM u"},
		{"SELECT * FROM a, b AS y, (SELECT 1) z", "SELECT * FROM a, b AS y, (SELECT 1) AS z"},
		{"SELECT * FROM a INNER JOIN b ON a.id = b.id LEFT OUTER JOIN c ON c.x = a.x RIGHT JOIN d USING (k) FULL OUTER JOIN e ON TRUE CROSS JOIN f",
			"SELECT * FROM a INNER JOIN b ON a.id = b.id LEFT OUTER JOIN c ON c.x = a.x RIGHT JOIN d USING (k) FULL OUTER JOIN e ON TRUE CROSS JOIN f"},
		{"SELECT * FROM a JOIN (b JOIN c ON b.x = c.x) ON a.y = b.y",
			"SELECT * FROM a JOIN (b JOIN c ON b.x = c.x) ON a.y = b.y"},
		{"SELECT * FROM o JOIN r FOR SYSTEM_TIME AS OF o.proc_time AS x ON o.c = x.c",
			"SELECT * FROM o JOIN r FOR SYSTEM_TIME AS OF o.proc_time AS x ON o.c = x.c"},
		{"SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))",
			"SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))"},
		{"SELECT * FROM TABLE(HOP(DATA => TABLE bid, TIMECOL => DESCRIPTOR(ts), SLIDE => INTERVAL '5' MINUTES, SIZE => INTERVAL '10' MINUTES)) AS w",
			"SELECT * FROM TABLE(HOP(DATA => TABLE bid, TIMECOL => DESCRIPTOR(ts), SLIDE => INTERVAL '5' MINUTES, SIZE => INTERVAL '10' MINUTES)) AS w"},
		{"SELECT * FROM TABLE(CUMULATE(TABLE bid, DESCRIPTOR(ts), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES))",
			"SELECT * FROM TABLE(CUMULATE(TABLE bid, DESCRIPTOR(ts), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES))"},
		{"SELECT * FROM TABLE(SESSION(TABLE bid PARTITION BY item, DESCRIPTOR(ts), INTERVAL '5' MINUTES))",
			"SELECT * FROM TABLE(SESSION(TABLE bid PARTITION BY item, DESCRIPTOR(ts), INTERVAL '5' MINUTES))"},
		{"SELECT * FROM TABLE(SESSION(TABLE bid PARTITION BY (a, b), DESCRIPTOR(ts), INTERVAL '5' MINUTES))",
			"SELECT * FROM TABLE(SESSION(TABLE bid PARTITION BY (a, b), DESCRIPTOR(ts), INTERVAL '5' MINUTES))"},
		{"SELECT * FROM t, LATERAL TABLE(split(s)) AS x (word)", "SELECT * FROM t, LATERAL TABLE(split(s)) AS x (word)"},
		{"SELECT B.bidder, SESSION_START(B.`dateTime`, INTERVAL '10' SECOND) FROM bid B GROUP BY B.bidder, SESSION(B.`dateTime`, INTERVAL '10' SECOND)",
			"SELECT B.bidder, SESSION_START(B.`dateTime`, INTERVAL '10' SECOND) FROM bid AS B GROUP BY B.bidder, SESSION(B.`dateTime`, INTERVAL '10' SECOND)"},
		{"VALUES (1), (2)", "VALUES (1), (2)"},
		{"SELECT 1", "SELECT 1"},
		{"((SELECT 1))", "SELECT 1"},
	} {
		checkStatement(t, tc.in, tc.want)
	}
}

func TestScriptsSplitAtSemicolons(t *testing.T) {
	stmts, err := parse.Parse(`
		-- a comment; with a semicolon
		SET 'a' = 'b';;
		/* a block
		   comment; */ SELECT 'x;y' FROM t;
		INSERT INTO s SELECT * FROM t`)
	if err != nil {
		t.Fatal(err)
	}
	got := ast.Script(stmts)
	want := "SET 'a' = 'b';\nSELECT 'x;y' FROM t;\nINSERT INTO s SELECT * FROM t;\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if stmts, err := parse.Parse(" ; -- nothing\n"); err != nil || len(stmts) != 0 {
		t.Errorf("an empty script: %d statements, %v", len(stmts), err)
	}
}

func TestSubstitute(t *testing.T) {
	got := parse.Substitute("FROM ${NEXMARK_TABLE} WITH ('r' = '${TPS}', 'x' = '${UNKNOWN}', 'y' = '${')",
		map[string]string{"NEXMARK_TABLE": "kafka", "TPS": "1000"})
	want := "FROM kafka WITH ('r' = '1000', 'x' = '${UNKNOWN}', 'y' = '${')"
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestNodesRecordTheirPositions(t *testing.T) {
	stmts, err := parse.Parse("SET 'a' = 'b';\nINSERT INTO t\n  SELECT x,\n    count(*) AS n\n  FROM TABLE(\n    TUMBLE(TABLE bid, DESCRIPTOR(ts), INTERVAL '1' SECOND))")
	if err != nil {
		t.Fatal(err)
	}
	ins := stmts[1].(*ast.Insert)
	sel := ins.Query.Body.(*ast.Select)
	tf := sel.From.(*ast.TableFunc)
	for _, tc := range []struct {
		what string
		node ast.Node
		want string
	}{
		{"SET", stmts[0], "1:1"},
		{"INSERT", ins, "2:1"},
		{"table name", ins.Table, "2:13"},
		{"SELECT", sel, "3:3"},
		{"x", sel.Items[0].X, "3:10"},
		{"count(*)", sel.Items[1].X, "4:5"},
		{"alias n", *sel.Items[1].Alias, "4:17"},
		{"TABLE(", tf, "5:8"},
		{"TUMBLE", tf.Call, "6:5"},
		{"TABLE bid", tf.Call.Args[0], "6:12"},
		{"DESCRIPTOR", tf.Call.Args[1], "6:23"},
		{"INTERVAL", tf.Call.Args[2], "6:39"},
	} {
		if got := tc.node.Position().String(); got != tc.want {
			t.Errorf("%s at %s, want %s", tc.what, got, tc.want)
		}
	}
}
