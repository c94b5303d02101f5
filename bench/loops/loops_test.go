package loops

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/nexmark"
	"github.com/weir-stream/weir/nexmark/queries"
)

// changelogQueries write rows with an "op"; their final tables are
// compared, since the order of updates across keys depends on the engine.
var changelogQueries = map[string]bool{"q4": true, "q17": true, "q18": true, "q19": true}

// The queries of the Flink comparison, each of which needs a loop.
var compared = []string{"q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q11", "q12", "q17", "q18", "q19", "q20"}

func TestEveryComparedQueryHasALoop(t *testing.T) {
	for _, q := range compared {
		if _, ok := Lookup(q); !ok {
			t.Errorf("no loop for %s", q)
		}
	}
}

// TestLoopsWriteWeirsRows runs each query on weir and its loop over the
// same events and compares the rows as multisets (changelog queries: the
// final tables). weir runs at parallelism 1, where its source reads the
// events in the loops' order: q18 keeps the later of two bids with equal
// dateTime by arrival, which at higher parallelism depends on which source
// subtask runs ahead.
func TestLoopsWriteWeirsRows(t *testing.T) {
	cfg := nexmark.DefaultConfig()
	cfg.NumEvents = 60_000 // 6 s of event time: several windows close
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l, _ := Lookup(name)
			want := runWeir(t, name, cfg)
			got, err := l.Rows(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := l.Count(cfg); err != nil || n != int64(len(got)) {
				t.Fatalf("%s: Count = %d, %v; Rows wrote %d", name, n, err, len(got))
			}
			if changelogQueries[name] {
				want, got = finalTable(t, want), finalTable(t, got)
			}
			slices.Sort(want)
			slices.Sort(got)
			if len(want) == 0 {
				t.Fatalf("weir wrote no rows for %s; the comparison would prove nothing", name)
			}
			if !slices.Equal(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("%s: loop %d rows, weir %d rows; first difference:\n loop %s\n weir %s", name, len(got), len(want), got[i], want[i])
					}
				}
				t.Fatalf("%s: loop %d rows, weir %d rows", name, len(got), len(want))
			}
		})
	}
}

func runWeir(t *testing.T, name string, cfg nexmark.Config) []string {
	t.Helper()
	q, ok := queries.Lookup(name)
	if !ok {
		t.Fatalf("weir has no query %s", name)
	}
	dir := t.TempDir()
	p := weir.NewPipeline(weir.WithParallelism(1), weir.WithName("loops-"+name))
	in, err := queries.Events(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	q.Build(in, queries.Output{Dir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := file.ReadLines(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// finalTable folds changelog rows into the rows they leave in the table,
// without their "op", failing on a retraction of a row not in the table.
func finalTable(t *testing.T, rows []string) []string {
	t.Helper()
	table := map[string]int{}
	for _, r := range rows {
		var m map[string]any
		if err := json.Unmarshal([]byte(r), &m); err != nil {
			t.Fatalf("row %s: %v", r, err)
		}
		op, _ := m["op"].(string)
		delete(m, "op")
		b, _ := json.Marshal(m)
		k := string(b)
		switch op {
		case queries.Insert, queries.UpdateAfter:
			table[k]++
		case queries.UpdateBefore, queries.Delete:
			if table[k] == 0 {
				t.Fatalf("retraction of a row not in the table: %s", r)
			}
			table[k]--
		default:
			t.Fatalf("row without a changelog op: %s", r)
		}
	}
	var out []string
	for k, n := range table {
		for range n {
			out = append(out, k)
		}
	}
	return out
}

// TestFinalTableFoldsUpdates checks the test's own helper.
func TestFinalTableFoldsUpdates(t *testing.T) {
	rows := []string{`{"op":"+I","k":1,"v":1}`, `{"op":"-U","k":1,"v":1}`, `{"op":"+U","k":1,"v":2}`, `{"op":"+I","k":2,"v":5}`}
	got := strings.Join(finalTable(t, rows), " ")
	if got != `{"k":1,"v":2} {"k":2,"v":5}` && got != `{"k":2,"v":5} {"k":1,"v":2}` {
		t.Fatalf("final table %s", got)
	}
}
