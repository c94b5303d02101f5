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
		check := func(seeds []uint64) weirtest.Result {
			return weirtest.Check(t, job, weirtest.Options[windowCount]{
				Guarantee: v.g, Seeds: seeds, Checkpoints: v.ck, Compare: compareCounts(v.g),
				Options: []weir.Option{weir.WithFailover(weir.FineGrainedFailover), weir.WithActiveStandby(), weir.WithLog(logs.add)},
			})
		}
		all := seeds(schedulesPerJob)
		res := check(all)
		if res.Injected == 0 {
			t.Fatalf("no failure was injected: %+v", res)
		}
		// In the one-stage job the windows are chained to the sink: no
		// task has a standby. In the others a standby must have taken
		// over: a few schedules (as -short runs) may all miss the
		// primaries, so further seeds run, one at a time, until one hits.
		if !strings.Contains(t.Name(), "one-stage") {
			for seed := uint64(len(all)) + 1; strings.Count(logs.String(), "took its place") == 0; seed++ {
				if seed > uint64(len(all))+20 {
					t.Fatalf("no failure was taken over by a standby in %d schedules", seed-1)
				}
				check([]uint64{seed})
			}
		}
		out := logs.String()
		t.Logf("%+v; %d takeovers, %d standbys started again", res, strings.Count(out, "took its place"), strings.Count(out, "has an active standby again"))
	})
}
