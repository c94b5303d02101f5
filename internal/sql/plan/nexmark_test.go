package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/sql/parse"
	"github.com/weir-stream/weir/internal/sql/types"
)

// testAggregates types the aggregates the plan tests use.
func testAggregates(fn string, distinct bool, in types.Type) (types.Type, bool, error) {
	switch fn {
	case "COUNT":
		return types.Type{Kind: types.BigInt, NotNull: true}, true, nil
	case "SUM", "MIN", "MAX", "AVG":
		return in, true, nil
	}
	return types.Type{}, false, nil
}

// nexmarkScript returns the Nexmark DDL and query qN, as published.
func nexmarkScript(t *testing.T, q string) string {
	t.Helper()
	dir := filepath.Join("..", "parse", "testdata", "nexmark")
	var b strings.Builder
	for _, f := range []string{"ddl_gen.sql", "ddl_views.sql", q + ".sql"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteString(";\n")
	}
	return parse.Substitute(b.String(), map[string]string{"NEXMARK_TABLE": "datagen", "TPS": "10000", "EVENTS_NUM": "1000",
		"PERSON_PROPORTION": "1", "AUCTION_PROPORTION": "3", "BID_PROPORTION": "46"})
}

func bindNexmark(t *testing.T, q string) (*Program, error) {
	stmts, err := parse.Parse(nexmarkScript(t, q))
	if err != nil {
		t.Fatalf("%s: parse: %v", q, err)
	}
	cat := NewCatalog()
	cat.Aggregates = testAggregates
	return Bind(stmts, cat)
}

// Every published Nexmark query but q6 binds and plans.
func TestEveryNexmarkQueryPlans(t *testing.T) {
	for _, q := range []string{"q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q9", "q10", "q11", "q12", "q13", "q15", "q16", "q17", "q18", "q19", "q20", "q21", "q22"} {
		p, err := bindNexmark(t, q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		if len(p.Statements) != 1 {
			t.Errorf("%s: %d statements, want its INSERT", q, len(p.Statements))
		}
	}
}
