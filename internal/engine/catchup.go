package engine

import (
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/task"
)

// A subtask restarted alone declines checkpoints until it sent what its
// previous incarnation had (task.ErrCatchingUp): a deterministic replay
// gets there. One that is not deterministic (a window whose watermark
// moved on past records its previous incarnation counted, say) may never
// get there, and a job whose checkpoints are all declined commits
// nothing while its records still move, which the stall watch does not
// see. So a subtask that still declines Config.StallTimeout after its
// first decline since the latest completed checkpoint fails the attempt,
// and the job falls back to a global rollback.

// noteCatchingUp notes that subtask id declined a checkpoint with err
// and fails the attempt once it has been catching up for too long.
func (a *attemptState) noteCatchingUp(id dataflow.SubtaskID, err error) {
	if a.catchingUp == nil {
		a.catchingUp = map[dataflow.SubtaskID]time.Time{}
	}
	since, ok := a.catchingUp[id]
	if !ok {
		a.catchingUp[id] = time.Now()
		return
	}
	limit := a.e.cfg.StallTimeout
	if limit <= 0 || time.Since(since) < limit || a.failure != nil {
		return
	}
	a.failure = fmt.Errorf("%w: after %v it is still behind (%v), so the job falls back to a global rollback",
		task.ErrNotDeterministic, time.Since(since).Round(time.Millisecond), err)
}
