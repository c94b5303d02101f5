package exec

import (
	"testing"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Group and window aggregation, exactly-once under injected failures,
// give the failure-free results: the final table of q17's changelog and
// q11's session rows.
func TestAggregationsAreExactlyOnceUnderInjectedFailures(t *testing.T) {
	cfg := nexmarkConfig(40_000)
	injected := 0
	for _, c := range []struct {
		name      string
		build     func(weir.Stream[nexmark.Event], string)
		normalize func([]string) []string
	}{
		{"group", buildQ17, func(rows []string) []string { return finalLines(t, rows) }},
		{"window", buildQ11, sorted},
	} {
		t.Run(c.name, func(t *testing.T) {
			clean, _ := runNexmark(t, cfg, 2, 0, c.build)
			want := c.normalize(clean)
			for _, seed := range []uint64{1, 2} {
				rows, n := runNexmark(t, cfg, 2, seed, c.build)
				injected += n
				sameLines(t, c.name, c.normalize(rows), want)
			}
		})
	}
	if injected == 0 {
		t.Fatal("no failure was injected: the test proved nothing")
	}
	t.Logf("%d failures injected", injected)
}
