package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/task"
)

// A subtask restarted alone that keeps declining checkpoints because it
// has not caught up fails the attempt once it has done so for the stall
// timeout: a replay that is not deterministic never catches up, and the
// job would otherwise commit nothing while its records still move.
func TestASubtaskCatchingUpForTooLongFailsTheAttempt(t *testing.T) {
	id := dataflow.SubtaskID{Vertex: 1, Subtask: 2}
	decline := errors.New("declined")
	a := &attemptState{e: &engine{cfg: Config{StallTimeout: time.Minute}}}
	a.noteCatchingUp(id, decline)
	a.noteCatchingUp(id, decline)
	if a.failure != nil {
		t.Fatalf("declines within the stall timeout failed the attempt: %v", a.failure)
	}
	a.catchingUp[id] = time.Now().Add(-2 * time.Minute) // its first decline was that long ago
	a.noteCatchingUp(id, decline)
	if !errors.Is(a.failure, task.ErrNotDeterministic) {
		t.Fatalf("got %v, want the attempt failed as not deterministic", a.failure)
	}

	off := &attemptState{e: &engine{cfg: Config{}}, catchingUp: map[dataflow.SubtaskID]time.Time{id: time.Now().Add(-time.Hour)}}
	off.noteCatchingUp(id, decline)
	if off.failure != nil {
		t.Fatalf("with no stall timeout: %v", off.failure)
	}
}
