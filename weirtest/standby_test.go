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
	jobs := []struct {
		name string
		job  func(*weir.Pipeline, connector.Sink[windowCount])
	}{{"one-stage", windowJob}, {"two-stage", deepJob}, {"rebalanced", rebalancedJob}}
	for _, j := range jobs {
		for _, v := range []variant{variants[0], variants[1]} { // exactly-once and at-least-once, aligned
			t.Run(j.name+"/"+v.name, func(t *testing.T) {
				logs := &logLines{}
				res := weirtest.Check(t, j.job, weirtest.Options[windowCount]{
					Guarantee: v.g, Seeds: seeds(schedulesPerJob), Checkpoints: v.ck, Compare: compareCounts(v.g),
					Options: []weir.Option{weir.WithFailover(weir.FineGrainedFailover), weir.WithActiveStandby(), weir.WithLog(logs.add)},
				})
				if res.Injected == 0 {
					t.Fatalf("no failure was injected: %+v", res)
				}
				all := logs.String()
				t.Logf("%+v; %d takeovers, %d standbys stopped, %d started again", res,
					strings.Count(all, "took its place"), strings.Count(all, "standby of subtask"+" "), strings.Count(all, "has an active standby again"))
			})
		}
	}
}
