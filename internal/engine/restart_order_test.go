package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// restartingExecutor is an executor that restarts single subtasks as
// task.Runtime does, where it matters here: a restart waits for every
// subtask it restarts to have stopped or failed, and a Stop that reaches
// a subtask while a restart brings it back is lost (it reaches the
// incarnation that was ending, not the new one).
type restartingExecutor struct {
	spec AttemptSpec

	mu         sync.Mutex
	stopped    map[dataflow.SubtaskID]bool // its incarnation stopped or failed
	restarting map[dataflow.SubtaskID]bool // a restart brings it back
	problems   []string

	lost     chan dataflow.SubtaskID // a Stop that a restart made void
	restarts chan restartCall
}

type restartCall struct {
	ids   []dataflow.SubtaskID
	ready chan struct{}
}

func (x *restartingExecutor) Run(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

func (x *restartingExecutor) Kill(dataflow.SubtaskID, error)           {}
func (x *restartingExecutor) Trigger(int64, task.TriggerOptions)       {}
func (x *restartingExecutor) TriggerSubtask(dataflow.SubtaskID, int64) {}
func (x *restartingExecutor) Complete(int64)                           {}
func (x *restartingExecutor) Abort(int64)                              {}
func (x *restartingExecutor) Release()                                 {}
func (x *restartingExecutor) Written() int64                           { return 0 }
func (x *restartingExecutor) Positions() map[dataflow.SubtaskID][]byte { return nil }
func (x *restartingExecutor) Activity() Activity                       { return Activity{} }
func (x *restartingExecutor) fail(id dataflow.SubtaskID, err error) {
	x.mark(id)
	x.spec.Options.Host.Failed(id, err)
}
func (x *restartingExecutor) mark(id dataflow.SubtaskID) {
	x.mu.Lock()
	x.stopped[id] = true
	x.mu.Unlock()
}
func (x *restartingExecutor) restarted(ids []dataflow.SubtaskID, ready chan struct{}) {
	x.mu.Lock()
	for _, id := range ids {
		delete(x.restarting, id)
	}
	x.mu.Unlock()
	close(ready)
}

func (x *restartingExecutor) Stop(ids []dataflow.SubtaskID) {
	x.mu.Lock()
	var lost []dataflow.SubtaskID
	for _, id := range ids {
		if x.restarting[id] {
			lost = append(lost, id)
		} else {
			x.stopped[id] = true
		}
	}
	x.mu.Unlock()
	for _, id := range lost {
		x.lost <- id
	}
}

func (x *restartingExecutor) Restart(_ context.Context, ids []dataflow.SubtaskID, _ *store.Metadata, _ int) (<-chan struct{}, error) {
	x.mu.Lock()
	for _, id := range ids {
		if !x.stopped[id] {
			x.problems = append(x.problems, fmt.Sprintf("the restart of %v waits for subtask %v, which runs and was never stopped", ids, id))
		}
		x.stopped[id] = false
		x.restarting[id] = true
	}
	x.mu.Unlock()
	c := restartCall{ids, make(chan struct{})}
	x.restarts <- c
	return c.ready, nil
}

// await returns what ch gives, or fails the test with every goroutine's
// stack if nothing comes for a minute.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		buf := make([]byte, 1<<20)
		t.Fatalf("waiting for %s; goroutines:\n%s", what, buf[:runtime.Stack(buf, true)])
		panic("unreachable")
	}
}

// A subtask stopped for a second failure while the restart of the first
// brings it back runs a new incarnation the Stop did not reach; the
// engine's next restart must stop it again, once the first restart is
// done, or that restart waits for it to stop for ever (the oracle's cone
// job hung so under load: the downstream subtasks waited for the replay
// of an upstream subtask whose restart never came).
func TestASubtaskStoppedWhileItRestartsIsStoppedAgainBeforeTheNextRestart(t *testing.T) {
	src := &plan.Node{ID: 0, Name: "source", Kind: plan.Source, Ports: 1}
	sink := &plan.Node{ID: 1, Name: "sink", Kind: plan.Sink}
	edge := &plan.Edge{From: src, To: sink, Partitioning: plan.Forward}
	sink.Inputs = []*plan.Edge{edge}
	v0 := &plan.Vertex{ID: 0, Chain: []*plan.Node{src}, Parallelism: 1}
	v1 := &plan.Vertex{ID: 1, Chain: []*plan.Node{sink}, Parallelism: 1}
	pe := &plan.PhysicalEdge{Edge: edge, Source: v0, Target: v1}
	v0.Outputs, v1.Inputs = []*plan.PhysicalEdge{pe}, []*plan.PhysicalEdge{pe}
	p := &plan.Plan{Vertices: []*plan.Vertex{v0, v1}}
	source, sinkID := dataflow.SubtaskID{Vertex: 0}, dataflow.SubtaskID{Vertex: 1}
	if cone := Cone(p, source); len(cone) != 2 {
		t.Fatalf("the cone of the source is %v, want the source and the sink", cone)
	}

	x := &restartingExecutor{stopped: map[dataflow.SubtaskID]bool{}, restarting: map[dataflow.SubtaskID]bool{},
		lost: make(chan dataflow.SubtaskID, 16), restarts: make(chan restartCall, 16)}
	deployed := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Config{Job: "restart-order", Plan: p, Mode: AtLeastOnce, Failover: FineGrained,
			SubtaskRestarts: true, Store: store.New(blob.Memory()), Restart: &FixedDelay{Attempts: 10},
			Deploy: func(_ context.Context, spec AttemptSpec) (Executor, error) {
				x.spec = spec
				close(deployed)
				return x, nil
			}})
		ended <- err
	}()
	await(t, deployed, "the attempt to start")

	x.fail(sinkID, errors.New("first failure"))
	first := await(t, x.restarts, "the restart of the sink")
	x.fail(source, errors.New("second failure"))
	if id := await(t, x.lost, "the stop of the source's cone"); id != sinkID {
		t.Fatalf("the second failure stopped %v while it restarted, want the sink", id)
	}
	x.restarted(first.ids, first.ready)
	second := await(t, x.restarts, "the restart of the source's cone")
	if len(second.ids) != 2 {
		t.Errorf("the second restart restarts %v, want the source and the sink", second.ids)
	}
	x.mu.Lock()
	for _, p := range x.problems {
		t.Error(p)
	}
	x.mu.Unlock()
	cancel()
	if err := await(t, ended, "the job to end"); !errors.Is(err, context.Canceled) {
		t.Errorf("the job ended with %v, want it canceled", err)
	}
}
