package queries

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/nexmark"
	"github.com/weir-stream/weir/weirtest"
)

// testConfig is the event stream every query test reads: Beam's defaults
// with 4 generators and n events.
func testConfig(n int64) nexmark.Config {
	cfg := nexmark.DefaultConfig()
	cfg.NumEvents = n
	cfg.NumEventGenerators = 4
	return cfg
}

// allEvents returns the events of cfg, generator by generator; references
// must not depend on the order.
func allEvents(t *testing.T, cfg nexmark.Config) []nexmark.Event {
	t.Helper()
	g, err := nexmark.NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out []nexmark.Event
	for _, sg := range g.Split(cfg.NumEventGenerators) {
		for i := range sg.MaxEvents() {
			var e nexmark.Event
			sg.EventAt(i, &e)
			out = append(out, e)
		}
	}
	return out
}

// rowsJSON encodes rows as the file sink does: one JSON document each,
// without HTML escaping.
func rowsJSON[T any](t *testing.T, rows []T) []string {
	t.Helper()
	out := make([]string, len(rows))
	for i := range rows {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&rows[i]); err != nil {
			t.Fatal(err)
		}
		out[i] = strings.TrimSuffix(b.String(), "\n")
	}
	return out
}

// runQuery runs query name over cfg's events at the given parallelism and
// returns its output rows.
func runQuery(t *testing.T, name string, cfg nexmark.Config, par int) []string {
	t.Helper()
	q, ok := Lookup(name)
	if !ok {
		t.Fatalf("no query %s", name)
	}
	dir := t.TempDir()
	// Under WEIR_TEST_STATE_BACKEND the queries' results are checked
	// against the hand-computed ones with that backend too.
	p := weir.NewPipeline(append(weirtest.StateBackendFromEnv(), weir.WithParallelism(par), weir.WithName(name))...)
	in, err := Events(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	q.Build(in, Output{Dir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return readRows(t, dir)
}

// readRows returns the rows of the part files in dir.
func readRows(t *testing.T, dir string) []string {
	t.Helper()
	rows, err := file.ReadLines(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// check compares the query's rows at parallelism 1 and 4 with the
// reference's, as multisets.
func check(t *testing.T, name string, cfg nexmark.Config, want []string) {
	t.Helper()
	want = slices.Clone(want)
	slices.Sort(want)
	if len(want) == 0 {
		t.Fatalf("%s: the reference produced no rows; the test would prove nothing", name)
	}
	for _, par := range []int{1, 4} {
		got := runQuery(t, name, cfg, par)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			diff := ""
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					diff = "first difference:\n got  " + got[i] + "\n want " + want[i]
					break
				}
			}
			t.Fatalf("%s at parallelism %d: %d rows, reference %d rows; %s", name, par, len(got), len(want), diff)
		}
	}
}

// applyChangelog folds changelog rows into their final table
// (ApplyChangelog) and fails the test if they are not a valid changelog.
func applyChangelog(t *testing.T, rows []string) []string {
	t.Helper()
	table, err := ApplyChangelog(rows)
	if err != nil {
		t.Fatal(err)
	}
	return table
}

// checkChangelog runs the changelog query name at parallelism 1
// and 4 and compares the table its rows fold into (applyChangelog) with
// want, the reference's final rows (their op fields are ignored), in
// applyChangelog's canonical encoding.
func checkChangelog[T any](t *testing.T, name string, cfg nexmark.Config, want []T) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: the reference produced no rows; the test would prove nothing", name)
	}
	var canon []string
	for _, r := range rowsJSON(t, want) {
		var m map[string]any
		if err := json.Unmarshal([]byte(r), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "op")
		b, _ := json.Marshal(m)
		canon = append(canon, string(b))
	}
	slices.Sort(canon)
	for _, par := range []int{1, 4} {
		got := applyChangelog(t, runQuery(t, name, cfg, par))
		if !slices.Equal(got, canon) {
			diff := ""
			for i := range min(len(got), len(canon)) {
				if got[i] != canon[i] {
					diff = "first difference:\n got  " + got[i] + "\n want " + canon[i]
					break
				}
			}
			t.Fatalf("%s at parallelism %d: final table of %d rows, reference %d rows; %s", name, par, len(got), len(canon), diff)
		}
	}
}
