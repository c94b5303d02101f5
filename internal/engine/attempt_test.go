package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// lingeringExecutor restarts single subtasks, and its Run returns only
// when the test lets it after its context ended, as an executor does
// that waits for its subtasks or workers to stop.
type lingeringExecutor struct {
	spec    AttemptSpec
	release chan struct{}
}

func (x *lingeringExecutor) Run(ctx context.Context) error {
	<-ctx.Done()
	<-x.release
	return ctx.Err()
}

func (x *lingeringExecutor) Kill(dataflow.SubtaskID, error)           {}
func (x *lingeringExecutor) Trigger(int64, task.TriggerOptions)       {}
func (x *lingeringExecutor) TriggerSubtask(dataflow.SubtaskID, int64) {}
func (x *lingeringExecutor) Complete(int64)                           {}
func (x *lingeringExecutor) Abort(int64)                              {}
func (x *lingeringExecutor) Release()                                 {}
func (x *lingeringExecutor) Written() int64                           { return 0 }
func (x *lingeringExecutor) Positions() map[dataflow.SubtaskID][]byte { return nil }
func (x *lingeringExecutor) Stop([]dataflow.SubtaskID)                {}
func (x *lingeringExecutor) Restart(context.Context, []dataflow.SubtaskID, *store.Metadata, int) (<-chan struct{}, error) {
	ready := make(chan struct{})
	close(ready)
	return ready, nil
}

// An attempt that restarts single subtasks and ends at a failure it
// cannot restart from returns only once its executor's Run returned: the
// next attempt must not run beside the remains of this one. (It used to
// return at once and leave the Run to a goroutine nobody waited for.)
func TestAnAttemptRestartingSubtasksAloneWaitsForItsExecutorToStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := &lingeringExecutor{release: make(chan struct{})}
		deployed := make(chan struct{})
		ended := make(chan error, 1)
		go func() {
			_, err := Run(context.Background(), Config{Job: "lingering", Plan: oneSource(), Mode: AtLeastOnce, Failover: FineGrained,
				SubtaskRestarts: true, Store: store.New(blob.Memory()), Restart: NoRestart{},
				Deploy: func(_ context.Context, spec AttemptSpec) (Executor, error) {
					x.spec = spec
					close(deployed)
					return x, nil
				}})
			ended <- err
		}()
		<-deployed
		x.spec.Options.Host.Failed(dataflow.SubtaskID{}, errors.New("the source failed"))
		synctest.Wait()
		select {
		case err := <-ended:
			t.Errorf("the job ended (%v) while its executor's Run still ran", err)
			close(x.release)
			return
		default:
		}
		close(x.release)
		if err := <-ended; err == nil || !strings.Contains(err.Error(), "gave up") {
			t.Errorf("the job ended with %v, want the restart strategy to give up", err)
		}
	})
}
