package sql_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/nexmark/queries"
	"github.com/weir-stream/weir/sql"
)

func init() {
	if err := sql.RegisterFunction("shout", func(s string, n int64) string { return strings.ToUpper(s) + strings.Repeat("!", int(n)) }); err != nil {
		panic(err)
	}
	longest := weir.AggregatorFuncs(func() string { return "" },
		func(acc, s string) string {
			if len(s) > len(acc) {
				return s
			}
			return acc
		},
		func(a, b string) string {
			if len(b) > len(a) {
				return b
			}
			return a
		},
		func(acc string) string { return acc })
	if err := sql.RegisterAggregate("longest", longest); err != nil {
		panic(err)
	}
}

// runScript runs a script whose bare query writes JSON lines, and
// returns its final table as sorted JSON lines.
func runScript(t *testing.T, text string, p int) []string {
	t.Helper()
	dir := t.TempDir()
	s, err := sql.Parse(text, sql.Options{QueryOutput: dir})
	if err != nil {
		t.Fatal(err)
	}
	pl := weir.NewPipeline(weir.WithParallelism(p))
	if err := s.Build(pl); err != nil {
		t.Fatal(err)
	}
	if err := pl.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := file.ReadLines(dir)
	if err != nil {
		t.Fatal(err)
	}
	if queries.IsChangelog(rows) {
		if rows, err = queries.ApplyChangelog(rows); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(rows)
	return rows
}

// Scalar and aggregate functions registered from Go are called from SQL
// with their types checked and NULLs handled by SQL's rules.
func TestFunctionsRegisteredFromGoAreCalledFromSQL(t *testing.T) {
	got := runScript(t, `SELECT k, longest(s) AS l, shout(MAX(s), 2) AS x FROM (VALUES (1, 'ab'), (1, 'abcd'), (1, CAST(NULL AS VARCHAR)), (2, 'x')) AS v(k, s) GROUP BY k`, 2)
	want := []string{`{"k":1,"l":"abcd","x":"ABCD!!"}`, `{"k":2,"l":"x","x":"X!!"}`}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if _, err := sql.Parse(`SELECT shout(1, 2)`, sql.Options{}); err == nil || !strings.Contains(err.Error(), "shout") {
		t.Fatalf("a call with a wrong argument type: error %v, want one naming shout", err)
	}
	if err := sql.RegisterFunction("bad", func(ch chan int) int64 { return 0 }); err == nil {
		t.Fatal("a function of a channel was registered")
	}
}
