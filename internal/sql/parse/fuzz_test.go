package parse_test

import (
	"errors"
	"testing"

	"github.com/weir-stream/weir/internal/sql/ast"
	"github.com/weir-stream/weir/internal/sql/parse"
)

// FuzzParse checks that no input makes the parser panic, that every
// error is a *parse.Error with a position inside the text, and that
// whatever parses prints as SQL that parses to the same tree. Its seeds
// are the Nexmark files and a few fragments; as a plain test it runs
// just them.
func FuzzParse(f *testing.F) {
	for _, text := range nexmarkFiles(f) {
		f.Add(parse.Substitute(text, nexmarkVars))
	}
	for _, s := range []string{
		"SELECT a FROM t WHERE NOT a IS NULL AND b NOT IN (1, 2) OR c LIKE 'x%'",
		"SELECT * FROM TABLE(SESSION(TABLE bid PARTITION BY (a, b), DESCRIPTOR(ts), INTERVAL '5' MINUTES))",
		"CREATE TABLE t (a ROW<b MAP<INT, ARRAY<ROW(c INT NOT NULL)>>> METADATA FROM 'k' VIRTUAL)",
		"SELECT x FROM a UNION (SELECT y FROM b INTERSECT SELECT z FROM c) EXCEPT VALUES (1)",
		"EXPLAIN PLAN FOR WITH v AS (SELECT 1) SELECT -(-a) - -b FROM v ORDER BY 1 NULLS FIRST",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		stmts, err := parse.Parse(text)
		if err != nil {
			var perr *parse.Error
			if !errors.As(err, &perr) {
				t.Fatalf("error %v is a %T, not a *parse.Error", err, err)
			}
			if perr.Line < 1 || perr.Column < 1 {
				t.Fatalf("error %v has no position", err)
			}
			return
		}
		printed := ast.Script(stmts)
		again, err := parse.Parse(printed)
		if err != nil {
			t.Fatalf("%q printed as %q, which does not parse: %v", text, printed, err)
		}
		if got, want := ast.Dump(again), ast.Dump(stmts); got != want {
			t.Fatalf("%q printed as %q, which parses to\n%s\nnot\n%s", text, printed, got, want)
		}
	})
}
