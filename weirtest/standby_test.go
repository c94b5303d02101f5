package weirtest_test

import (
	"strings"
	"testing"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/weirtest"
)

// With active standbys, failures injected at random moments and at the
// named points of the checkpoint protocol, into primaries and standbys,
// are taken over by standbys or restart single subtasks, and the output
// keeps each guarantee.
func TestOracleActiveStandby(t *testing.T) {
	forFineGrainedJobs(t, func(t *testing.T, job func(*weir.Pipeline, connector.Sink[windowCount]), v variant) {
		logs := &logLines{}
		res := weirtest.Check(t, job, weirtest.Options[windowCount]{
			Guarantee: v.g, Seeds: seeds(schedulesPerJob), Checkpoints: v.ck, Compare: compareCounts(v.g),
			Options: []weir.Option{weir.WithFailover(weir.FineGrainedFailover), weir.WithActiveStandby(), weir.WithLog(logs.add)},
		})
		if res.Injected == 0 {
			t.Fatalf("no failure was injected: %+v", res)
		}
		all := logs.String()
		takeovers := strings.Count(all, "took its place")
		t.Logf("%+v; %d takeovers, %d standbys started again", res, takeovers, strings.Count(all, "has an active standby again"))
		// In the one-stage job the windows are chained to the sink: no
		// task has a standby. In the others some of the full schedule's
		// failures must have been taken over (-short runs too few).
		if !testing.Short() && !strings.Contains(t.Name(), "one-stage") && takeovers == 0 {
			t.Fatal("no failure was taken over by a standby")
		}
	})
}
