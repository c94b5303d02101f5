package task

import (
	"fmt"

	"github.com/weir-stream/weir/internal/input"
)

// The consumption order of a subtask that merges inputs is logged in a
// determinant.Log (internal/determinant) held by the runtime, so that it
// outlives a failed incarnation; the subtask records into it as it
// consumes (input.go), marks it at its snapshots (snapshot.go) and trims
// it when a checkpoint completes (control.go).

// startFollowing takes the consumption order this restarted subtask must
// repeat, from the runtime's log of its subtask.
func (s *subtask) startFollowing(restored int64) error {
	if s.det == nil || !s.role.regenerates() {
		return nil
	}
	order, ok := s.det.Since(restored)
	if !ok {
		return fmt.Errorf("the order in which it consumed its inputs since checkpoint %d was not kept: %w", restored, ErrBackupLost)
	}
	turns := make([]input.Turn, len(order))
	for i, d := range order {
		turns[i] = input.Turn{Ch: d.Ch, UpTo: d.UpTo}
	}
	s.in.Follow(turns)
	if len(turns) > 0 {
		s.follow()
	}
	return nil
}
