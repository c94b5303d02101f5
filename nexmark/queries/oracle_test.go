package queries

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
	"github.com/weir-stream/weir/weirtest"
)

// runWithFailures runs query name exactly-once with failures injected by
// seed, writing through the file sink's two-phase commit, and returns the
// rows and how many failures were injected.
func runWithFailures(t *testing.T, name string, cfg nexmark.Config, seed uint64) ([]string, int) {
	t.Helper()
	q, _ := Lookup(name)
	dir := t.TempDir()
	p := weir.NewPipeline(append(weirtest.StateBackendFromEnv(), weir.WithParallelism(2), weir.WithName(name), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond, CheckConsistency: true}),
		weir.WithInjectedFailures(2, seed), weir.WithFailureWindow(60*time.Millisecond),
		weir.WithRestartStrategy("fixed-delay", 100, time.Millisecond, 0, 0))...)
	in, err := Events(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	q.Build(in, Output{Dir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatalf("%s seed %d: %v", name, seed, err)
	}
	return readRows(t, dir), p.Report().Injected
}

// normalize returns what must be equal between two runs: the rows, or for
// a changelog the final table (the order of updates may differ between
// parallel runs).
func normalize(t *testing.T, rows []string) []string {
	if IsChangelog(rows) {
		return applyChangelog(t, rows)
	}
	out := slices.Clone(rows)
	slices.Sort(out)
	return out
}

// Every query, exactly-once under injected failures (random moments and
// named points of the checkpoint protocol), gives the failure-free result.
func TestQueriesExactlyOnceUnderFailures(t *testing.T) {
	seeds := []uint64{1, 2}
	if testing.Short() {
		seeds = seeds[:1]
	}
	cfg := testConfig(100000)
	cfg.FirstEventRate, cfg.NextEventRate = 1000, 1000 // a few seconds of event time per thousand events
	injected := 0
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			want := normalize(t, runQuery(t, name, cfg, 2))
			for _, seed := range seeds {
				rows, n := runWithFailures(t, name, cfg, seed)
				injected += n
				if got := normalize(t, rows); !slices.Equal(got, want) {
					t.Fatalf("seed %d (%d failures injected): %d rows, failure-free %d", seed, n, len(got), len(want))
				}
			}
		})
	}
	if injected == 0 {
		t.Fatal("no failure was injected: the test proved nothing")
	}
	t.Logf("%d failures injected over %d queries", injected, len(Names()))
}
