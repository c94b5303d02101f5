package sql_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/sql"
)

// physicalPlan builds Nexmark query q from its published SQL and returns
// the pipeline's physical plan.
func physicalPlan(t *testing.T, q string) string {
	t.Helper()
	s, err := sql.Parse(nexmarkScript(t, q, t.TempDir()), sql.Options{Vars: nexmarkVars(1000)})
	if err != nil {
		t.Fatal(err)
	}
	p := weir.NewPipeline(weir.WithParallelism(2))
	if err := s.Build(p); err != nil {
		t.Fatal(err)
	}
	plan, err := p.Explain()
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func TestTheViewsOfOneTableReadOneSource(t *testing.T) {
	// q3 joins the views auction and person over the table datagen.
	plan := physicalPlan(t, "q3")
	if n := strings.Count(plan, `source "`); n != 1 {
		t.Fatalf("%d sources, want 1:\n%s", n, plan)
	}
}

func TestAJoinOfTwoViewsOfOneTableReadsItsSourceThroughOneOperator(t *testing.T) {
	// q4 and q20 join the views auction and bid: one operator over the
	// source tags the rows of both, one exchange takes them to the join.
	for _, q := range []string{"q4", "q20"} {
		plan := physicalPlan(t, q)
		if strings.Contains(plan, "FORWARD") || strings.Contains(plan, "into input 1") {
			t.Errorf("%s: the join's sides are not read through one operator and one exchange:\n%s", q, plan)
		}
	}
}

func TestASubplanThatOccursTwiceRunsOnce(t *testing.T) {
	// q5 counts bids per auction and HOP window in both of its join's
	// inputs: one window aggregation counts, a second finds the maximum.
	plan := physicalPlan(t, "q5")
	if n := len(regexp.MustCompile(`operator "sql1-window-aggregate-\d+", keyed`).FindAllString(plan, -1)); n != 2 {
		t.Fatalf("%d window aggregations, want 2:\n%s", n, plan)
	}
}
