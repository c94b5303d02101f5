package cluster

import (
	"errors"
	"fmt"
	"testing"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/task"
)

// A failure keeps its class across the wire: what the engine decides by
// (permanent, corrupt checkpoint N, or neither) is the same for the
// coordinator's rebuilt error as for the worker's own.
func TestAFailureKeepsItsClassAcrossTheWire(t *testing.T) {
	cases := []struct {
		name      string
		err       error
		permanent bool
		corrupt   uint64
	}{
		{"crash", errors.New("boom"), false, 0},
		{"configuration", &task.Failure{Task: "sink", Err: connector.ConfigError(errors.New("out is a file"))}, true, 0},
		{"malformed", fmt.Errorf("reading: %w", &connector.MalformedError{Err: errors.New("bad json")}), true, 0},
		{"marked permanent", task.Permanent(errors.New("no 2pc")), true, 0},
		{"not deterministic", fmt.Errorf("%w: differs", task.ErrNotDeterministic), true, 0},
		{"corrupt checkpoint", fmt.Errorf("restarting subtasks: %w", engine.UnusableCheckpoint(12, errors.New("checksum mismatch"))), false, 12},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := attemptEnded("job/1.1", c.err)
			got := remoteFailure("w1", r.Error, r.Class, r.CorruptCheckpoint)
			if want := "on worker w1: " + c.err.Error(); got.Error() != want {
				t.Errorf("message %q, want %q", got, want)
			}
			if p := task.IsPermanent(got); p != c.permanent {
				t.Errorf("permanent: got %v, want %v", p, c.permanent)
			}
			id, corrupt := engine.CorruptCheckpoint(got)
			if corrupt != (c.corrupt != 0) || id != c.corrupt {
				t.Errorf("corrupt checkpoint: got %d (%v), want %d", id, corrupt, c.corrupt)
			}
			s := subtaskFailedReport("job/1.1", dataflow.SubtaskID{Vertex: 1}, c.err, false)
			if s.Class != r.Class || s.CorruptCheckpoint != r.CorruptCheckpoint {
				t.Errorf("a subtask's failure is classed %v/%d, an attempt's %v/%d", s.Class, s.CorruptCheckpoint, r.Class, r.CorruptCheckpoint)
			}
		})
	}
	if r := attemptEnded("job/1.1", nil); r.Error != "" || r.Class != 0 {
		t.Errorf("a share that finished reports %q of class %v", r.Error, r.Class)
	}
}
