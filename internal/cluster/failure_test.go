package cluster

import (
	"errors"
	"fmt"
	"testing"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/task"
)

// A failure keeps its class across the wire: whether a restart can cure
// it is the same for the coordinator's rebuilt error as for the worker's
// own.
func TestAFailureKeepsItsClassAcrossTheWire(t *testing.T) {
	cases := []struct {
		name      string
		err       error
		permanent bool
	}{
		{"crash", errors.New("boom"), false},
		{"configuration", &task.Failure{Task: "sink", Err: connector.ConfigError(errors.New("out is a file"))}, true},
		{"malformed", fmt.Errorf("reading: %w", &connector.MalformedError{Err: errors.New("bad json")}), true},
		{"marked permanent", task.Permanent(errors.New("no 2pc")), true},
		{"not deterministic", fmt.Errorf("%w: differs", task.ErrNotDeterministic), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := attemptEnded("job/1.1", c.err)
			got := remoteFailure("w1", r.Error, r.Class)
			if want := "on worker w1: " + c.err.Error(); got.Error() != want {
				t.Errorf("message %q, want %q", got, want)
			}
			if p := task.IsPermanent(got); p != c.permanent {
				t.Errorf("permanent: got %v, want %v", p, c.permanent)
			}
			s := subtaskFailedReport("job/1.1", task.SubtaskID{Vertex: 1}, c.err, false)
			if s.Class != r.Class {
				t.Errorf("a subtask's failure is classed %v, an attempt's %v", s.Class, r.Class)
			}
		})
	}
	if r := attemptEnded("job/1.1", nil); r.Error != "" || r.Class != 0 {
		t.Errorf("a share that finished reports %q of class %v", r.Error, r.Class)
	}
}
