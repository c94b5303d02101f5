package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/weirtest"
)

// bigintRow returns a row of BIGINT columns, NULL where a value is
// nullInt.
func bigintRow(vs ...int64) row.Row {
	r := row.Row{V: make([]row.Value, len(vs))}
	for i, v := range vs {
		if v == nullInt {
			r.V[i] = row.Null()
		} else {
			r.V[i] = row.BigInt(v)
		}
	}
	return r
}

const nullInt = -1 << 62

func opRow(op row.Op, r row.Row) row.Row { r.Op = op; return r }

// sourceRate is the rows per second a rowSource reads at most.
const sourceRate = 300_000

// rowSource reads rows from a bounded collection with timestamps from column
// tcol (or none if tcol < 0). par is the source's parallelism: a
// changelog with retractions must be read by one subtask, so that a
// retraction follows what it retracts.
func rowSource(p *weir.Pipeline, name string, rows []row.Row, tcol, par int) weir.Stream[row.Row] {
	opts := []weir.SourceOption{weir.SourceParallelism(par)}
	if tcol >= 0 {
		// An hour of out-of-orderness: the generated times span less, so
		// no row is late however the subtasks interleave.
		opts = append(opts, weir.WithTimestamps(func(r row.Row) int64 { return r.V[tcol].I }, time.Hour))
	}
	// Held to a rate so that a run lasts longer than the failure window
	// of injectedFailureOptions however fast the machine: a run that ended
	// first would see no failure.
	return weir.FromSource(p, name, connector.Throttle(collection.Of(rows...), sourceRate), opts...)
}

// runJoinRank runs the pipeline build makes and returns what reached its
// sink: through the collection sink, or exactly-once through the file
// sink's two-phase commit when opts ask for a guarantee. It returns the
// number of failures injected.
func runJoinRank(t *testing.T, exactlyOnce bool, build func(p *weir.Pipeline) weir.Stream[row.Row], opts ...weir.Option) ([]row.Row, int) {
	t.Helper()
	// Under WEIR_TEST_STATE_BACKEND the runs use that state backend.
	p := weir.NewPipeline(append(weirtest.StateBackendFromEnv(), opts...)...)
	out := build(p)
	var sink *collection.Sink[row.Row]
	dir := t.TempDir()
	if exactlyOnce {
		weir.To(out, "sink", file.JSONSink[row.Row](dir))
	} else {
		sink = collection.NewSink[row.Row]()
		weir.To(out, "sink", sink)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !exactlyOnce {
		return sink.Records(), 0
	}
	lines, err := file.ReadLines(dir)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]row.Row, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	return rows, p.Report().Injected
}

// injectedFailureOptions are the options of a run with failures injected by
// seed, as nexmark/queries/oracle_test.go runs its queries.
func injectedFailureOptions(seed uint64) []weir.Option {
	return []weir.Option{weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond, CheckConsistency: true}),
		weir.WithInjectedFailures(2, seed), weir.WithFailureWindow(60 * time.Millisecond),
		weir.WithRestartStrategy("fixed-delay", 100, time.Millisecond, 0, 0)}
}

// checkExactlyOnceUnderFailures runs build failure-free and exactly-once under
// injected failures, and compares the final tables; it fails the test if
// no failure was injected over the seeds.
func checkExactlyOnceUnderFailures(t *testing.T, build func(p *weir.Pipeline) weir.Stream[row.Row]) {
	t.Helper()
	clean, _ := runJoinRank(t, false, build, weir.WithParallelism(2))
	want := finalTable(t, clean)
	injected := 0
	for seed := uint64(1); seed <= 3; seed++ {
		got, n := runJoinRank(t, true, build, injectedFailureOptions(seed)...)
		injected += n
		diffFinalTables(t, fmt.Sprintf("seed %d", seed), finalTable(t, got), want)
	}
	if injected == 0 {
		t.Fatal("no failure was injected; the test proves nothing")
	}
}

// table folds a changelog into its final table: the sorted texts of the
// rows inserted and not retracted. A retraction of a row not in the table
// fails the test.
func finalTable(t *testing.T, rows []row.Row) []string {
	t.Helper()
	count := map[string]int{}
	for i, r := range rows {
		s := rowText(r)
		if r.Op.Retracts() {
			if count[s] == 0 {
				t.Fatalf("row %d: %v retracts a row not in the table", i, r.Op)
			}
			count[s]--
		} else {
			count[s]++
		}
	}
	var out []string
	for s, n := range count {
		for range n {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// text is a row's values as text, NULL as "-".
func rowText(r row.Row) string {
	var b strings.Builder
	for i, v := range r.V {
		if i > 0 {
			b.WriteByte(' ')
		}
		if v.IsNull() {
			b.WriteByte('-')
		} else {
			b.WriteString(v.Text())
		}
	}
	return b.String()
}

func rowTexts(rows []row.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = rowText(r)
	}
	slices.Sort(out)
	return out
}

func diffFinalTables(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	gm, wm := map[string]int{}, map[string]int{}
	for _, s := range got {
		gm[s]++
	}
	for _, s := range want {
		wm[s]++
	}
	var extra, missing []string
	for s, n := range gm {
		if n > wm[s] {
			extra = append(extra, s)
		}
	}
	for s, n := range wm {
		if n > gm[s] {
			missing = append(missing, s)
		}
	}
	t.Fatalf("%s: %d rows, want %d; extra %q, missing %q", what, len(got), len(want), firstFew(extra), firstFew(missing))
}

func firstFew(s []string) []string { slices.Sort(s); return s[:min(len(s), 5)] }

// changelog returns n rows of width columns from gen, as inserts, with a
// share of them retracted (-D, or -U followed by +U of a new row) later
// in the sequence when retract is set. It returns the changelog and the
// final rows.
func randomChangelog(rng *rand.Rand, n int, retract bool, gen func(i int) row.Row) (log, final []row.Row) {
	live := map[int]row.Row{}
	var order []int
	for i := range n {
		r := gen(i)
		log = append(log, r)
		live[i], order = r, append(order, i)
		if retract && rng.IntN(4) == 0 && len(order) > 0 {
			j := order[rng.IntN(len(order))]
			old, ok := live[j]
			if !ok {
				continue
			}
			delete(live, j)
			if rng.IntN(2) == 0 {
				log = append(log, opRow(row.Delete, old))
			} else {
				nr := gen(n + i)
				log = append(log, opRow(row.UpdateBefore, old), opRow(row.UpdateAfter, nr))
				live[n+i], order = nr, append(order, n+i)
			}
		}
	}
	for _, i := range order {
		if r, ok := live[i]; ok {
			final = append(final, opRow(row.Insert, r))
		}
	}
	return log, final
}

// key returns a random key in [0, n) or, one time in ten, NULL.
func randomKey(rng *rand.Rand, n int) int64 {
	if rng.IntN(10) == 0 {
		return nullInt
	}
	return int64(rng.IntN(n))
}
