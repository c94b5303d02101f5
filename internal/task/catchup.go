package task

import (
	"errors"
	"fmt"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
)

// This file is the catch-up of a subtask that restarted alone.
//
// A subtask that restarted alone regenerates records its consumers
// already have. Its snapshot must not be taken before it caught up with
// what the failed incarnation had sent, or a receiver asks a replay from
// (catchUp, per writer and channel): a consumer's snapshot would then
// reflect records the subtask's snapshot does not, and the checkpoint
// would not be a consistent cut (a restore from it would hand the
// consumer records again that its state holds already).
// A source defers the triggers that come meanwhile to the moment it
// caught up. Any other subtask cannot wait at its barriers: what it
// still has to send may depend on input behind them (a watermark, say),
// so it declines the checkpoint (ErrCatchingUp), and a later one
// succeeds. A subtask that finished before it caught up did not
// regenerate its output: its replay was not deterministic
// (ErrNotDeterministic).

// ErrCatchingUp declines a checkpoint at a subtask that restarted alone
// and has not yet sent what its previous incarnation had: the checkpoint
// is aborted without counting as a failure.
var ErrCatchingUp = errors.New("still catching up with the output of its previous incarnation")

// catchUpTarget returns what subtask index of v must send on each output
// channel before its next snapshot: sent, what its previous incarnations
// had sent, except on channels to subtasks in restarting, which restart
// from the checkpoint too and hold none of it. It returns nil when
// nothing is to catch up.
func (r *Runtime) catchUpTarget(v *plan.Vertex, index int, sent [][]int64, restarting map[dataflow.SubtaskID]bool) [][]int64 {
	if len(sent) != len(v.Outputs) {
		return nil
	}
	out := make([][]int64, len(sent))
	some := false
	for w, e := range v.Outputs {
		out[w] = append([]int64(nil), sent[w]...)
		for j := range out[w] {
			to := j
			if e.Partitioning == plan.Forward {
				to = index
			}
			if restarting[dataflow.SubtaskID{Vertex: e.Target.ID, Subtask: to}] {
				out[w][j] = 0
			}
			some = some || out[w][j] > 0
		}
	}
	if !some {
		return nil
	}
	return out
}

// behind describes the first output channel on which the subtask has
// not yet sent what catchUp names.
func (s *subtask) behind() string {
	for w, o := range s.outs {
		for j, n := range o.Sent() {
			if want := s.catchUp[w][j]; n < want {
				to := j
				if s.v.Outputs[w].Partitioning == plan.Forward {
					to = s.index
				}
				return fmt.Sprintf("%d of the %d records its previous incarnation sent to subtask %d of %q", n, want, to, s.v.Outputs[w].Target.Name())
			}
		}
	}
	return "nothing"
}

// catchingUp reports whether the subtask has not yet sent what its
// previous incarnation had, on some channel.
func (s *subtask) catchingUp() bool {
	if s.catchUp == nil {
		return false
	}
	for w, o := range s.outs {
		for j, n := range o.Sent() {
			if n < s.catchUp[w][j] {
				return true
			}
		}
	}
	s.catchUp = nil
	return false
}

// takeDeferred takes the latest checkpoint triggered while the subtask
// caught up.
func (s *subtask) takeDeferred() {
	s.catchUp = nil
	if id := s.deferred; id > s.lastCheckpoint {
		s.deferred = 0
		s.takeSnapshot(id, s.deferredHow)
	}
}

// sentCounts returns the records sent per writer and channel.
func (s *subtask) sentCounts() [][]int64 {
	out := make([][]int64, len(s.outs))
	for w, o := range s.outs {
		out[w] = o.Sent()
	}
	return out
}
