package weirtest_test

import (
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// The live rescale oracle: each job runs with failures injected, and its
// keyed task (with the sink chained to it) changes parallelism twice
// while it runs, from 2 to 4 and then to 1; the output is the
// failure-free run's, exactly once.

func checkRescaled(t *testing.T, res weirtest.Result, want int) {
	t.Helper()
	if res.Rescaled < want || res.Injected == 0 {
		t.Fatalf("%d live rescales (want at least %d), %d failures injected: the oracle proved nothing", res.Rescaled, want, res.Injected)
	}
	t.Logf("%d live rescales", res.Rescaled)
	report(t, res)
}

var rescaleSteps = []map[string]int{{"sink": 4}, {"sink": 1}}

func TestOracleLiveRescaleOfWindows(t *testing.T) {
	s := seeds(3)
	checkRescaled(t, weirtest.CheckLiveRescales(t, longWindowJob, weirtest.Options[windowCount]{Seeds: s}, rescaleSteps), 2*len(s))
}

// longDedupJob is dedupJob over five times the deliveries (a second at
// its rate), so that both rescales come before its input ends.
func longDedupJob(p *weir.Pipeline, sink connector.Sink[event]) {
	src := generator.New(5*redeliveries, redelivered, generator.WithRate(100_000))
	in := weir.FromSource(p, "deliveries", src, weir.WithTimestamps(func(e event) int64 { return e.Time }, 50*time.Millisecond))
	weir.To(weir.DeduplicateBy(in, func(e event) int64 { return e.Key }, time.Second), "sink", sink)
}

func TestOracleLiveRescaleOfDeduplicate(t *testing.T) {
	s := seeds(3)
	checkRescaled(t, weirtest.CheckLiveRescales(t, longDedupJob, weirtest.Options[event]{Seeds: s}, rescaleSteps), 2*len(s))
}
