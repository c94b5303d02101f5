package weirtest_test

import (
	"fmt"
	"testing"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/weirtest"
)

// Failure schedules that once broke a fine-grained job, pinned so that
// every run of the suite repeats them (the soaks run them among many).
// Whether one breaks again depends on timing, so each case says what it
// once did; a seed is a schedule, not a guarantee to reproduce.
func TestOraclePinnedSchedules(t *testing.T) {
	cases := []struct {
		job     string
		run     func(*weir.Pipeline, connector.Sink[windowCount])
		v       variant
		seed    uint64
		standby bool
		// once is what the schedule once did.
		once string
	}{
		{"sessions", sessionJob, variants[0], 32, false,
			"a buffer recycled twice put records of another key-group range in a batch: index out of range in the session operator, repeated on every restart"},
		{"sessions", sessionJob, variants[1], 22, false, "the same, at least once"},
		{"sessions", sessionJob, variants[1], 9, false, "the same, at least once"},
		{"sessions", sessionJob, variants[0], 5, false, "an inconsistent checkpoint from a corrupted batch's record count"},
		{"sessions", sessionJob, variants[0], 53, true,
			"a takeover lost an element the primary had taken but not logged: an inconsistent checkpoint"},
		{"two-stage", deepJob, variants[0], 78, true,
			"a subtask restarted before any checkpoint kept its standby cursors: its first barrier was called not deterministic"},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s/%s/seed-%d", c.job, c.v.name, c.seed)
		opts := []weir.Option{weir.WithFailover(weir.FineGrainedFailover)}
		if c.standby {
			name += "/active-standby"
			opts = append(opts, weir.WithActiveStandby())
		}
		t.Run(name, func(t *testing.T) {
			t.Logf("once: %s", c.once)
			res := weirtest.Check(t, c.run, weirtest.Options[windowCount]{
				Guarantee: c.v.g, Seeds: []uint64{c.seed}, Checkpoints: c.v.ck, Compare: compareCounts(c.v.g), Options: opts,
			})
			if res.Injected == 0 {
				t.Fatalf("no failure was injected: %+v", res)
			}
		})
	}
}
