package engine

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
)

// activityExecutor is an executor whose activity the test sets.
type activityExecutor struct {
	Executor
	a Activity
}

func (x *activityExecutor) Activity() Activity { return x.a }

// long ago is further back than any stall timeout of these tests.
func longAgo() time.Time { return time.Now().Add(-time.Hour) }

// Records moved, or a source polling for input while no checkpoint is in
// flight, are progress; nothing for the timeout, or idle sources while a
// checkpoint waits, is a stall.
func TestStallWatchTellsProgressFromAStall(t *testing.T) {
	x := &activityExecutor{a: Activity{Records: 10, SourceIdle: 5, IdleKnown: true}}
	w := &stallWatch{timeout: time.Minute, last: x.a}
	w.since = longAgo()
	if !w.stalled(x, false) {
		t.Fatal("nothing moved for an hour: not a stall")
	}
	w.since, x.a.Records = longAgo(), 11
	if w.stalled(x, false) {
		t.Fatal("a record moved: a stall")
	}
	w.since, x.a.SourceIdle = longAgo(), 6
	if w.stalled(x, false) {
		t.Fatal("a source found no input and no checkpoint is in flight: a stall")
	}
	w.since, x.a.SourceIdle = longAgo(), 7
	if !w.stalled(x, true) {
		t.Fatal("idle sources while a checkpoint waited for an hour: not a stall")
	}
	if (&stallWatch{}).stalled(x, false) {
		t.Fatal("a watch without a timeout reported a stall")
	}
}

// While the engine waits for a restart delay it schedules itself, the
// attempt is not stalled; past it, it is, and the attempt fails with
// ErrStalled and the report.
func TestAnAttemptWaitingForAScheduledRestartIsNotStalled(t *testing.T) {
	var reports []string
	e := &engine{cfg: Config{Log: func(string) {}, OnStall: func(r string) { reports = append(reports, r) }}, stats: map[int64]*CheckpointStats{}}
	a := &attemptState{e: e, rt: &activityExecutor{a: Activity{IdleKnown: true}}, acked: map[int64]map[dataflow.SubtaskID]bool{},
		finished: map[dataflow.SubtaskID]bool{}, stall: &stallWatch{timeout: time.Minute}}
	a.stall.since = longAgo()
	a.restartDue = time.Now().Add(time.Hour)
	a.checkStall()
	if a.failure != nil {
		t.Fatalf("waiting for a scheduled restart failed the attempt: %v", a.failure)
	}
	a.restartDue = time.Time{}
	a.stall.since = longAgo()
	a.checkStall()
	if !errors.Is(a.failure, ErrStalled) || len(reports) != 1 {
		t.Fatalf("failure %v, %d reports; want ErrStalled and one report", a.failure, len(reports))
	}
}

// blockingRuntime is a runtime whose Restart waits, as task.Runtime's
// does, for the subtasks to stop: here until the test lets it.
type blockingRuntime struct{ stopped chan struct{} }

func (blockingRuntime) Stop([]dataflow.SubtaskID) {}

func (b blockingRuntime) Restart(ctx context.Context, _ []dataflow.SubtaskID, _ map[dataflow.SubtaskID][]byte, _ int64, _ int) <-chan struct{} {
	<-b.stopped
	ready := make(chan struct{})
	close(ready)
	return ready
}

// Restarting subtasks in this process does not hold up the engine's loop
// while the subtasks stop: a stopping subtask may wait for the loop to
// take its snapshot or its end of input (the loop waited in Restart, the
// subtask for the loop, and the job hung: nexmark q4 with active
// standbys, 1 of 10 runs).
func TestALocalRestartDoesNotWaitForTheSubtasksToStop(t *testing.T) {
	rt := blockingRuntime{stopped: make(chan struct{})}
	returned := make(chan (<-chan struct{}), 1)
	go func() {
		ready, err := localRestarter{rt: rt}.Restart(context.Background(), []dataflow.SubtaskID{{Vertex: 1}}, nil, 1)
		if err != nil {
			t.Error(err)
		}
		returned <- ready
	}()
	var ready <-chan struct{}
	select {
	case ready = <-returned:
	case <-time.After(time.Minute):
		close(rt.stopped) // let the goroutine end
		buf := make([]byte, 1<<20)
		t.Fatalf("Restart waited for the subtasks to stop; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
	}
	select {
	case <-ready:
		t.Fatal("ready before the subtasks stopped and restarted")
	default:
	}
	close(rt.stopped)
	<-ready
}
