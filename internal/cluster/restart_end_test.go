package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// An attempt that fails while the subtasks of a lost worker move to a
// new share ends: the share, created but never deployed, ends with it,
// and the attempt's slots are given back. Before, Run waited for that
// share forever, the engine never saw the attempt end, and the job hung
// with nothing logged (a global rollback after a rejoined subtask lost
// its upstream backup, while the rest of the lost worker's subtasks were
// being moved).
func TestAnAttemptThatFailsWhileSubtasksMoveEnds(t *testing.T) {
	a := newMovingAttempt(t, 0, true)
	ready, err := a.x.Restart(a.ctx, []dataflow.SubtaskID{{Vertex: 0, Subtask: 0}}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The move created its share on w3 and asks w2's share what it holds
	// from the lost subtask; that share fails before it answers.
	if m := await(t, a.w2.out, "the MOVE command to worker w2"); m.GetCommand().GetKind() != pb.Command_MOVE {
		t.Fatalf("worker w2 was sent %v, want a MOVE command", m)
	}
	a.fail()
	if err := await(t, a.run, "the end of the attempt"); err == nil || !strings.Contains(err.Error(), "upstream backup lost") {
		t.Fatalf("the attempt ended with %v, want its share's failure", err)
	}
	await(t, ready, "the end of the restart")
	a.slotsGivenBack(t)
}

// An attempt that fails while the subtasks of a lost worker wait for a
// free slot (no replacement timeout: they wait however long it takes)
// ends: the restart stops waiting. Before, Run waited for the restart,
// which waited for the slots only Run's end gives back.
func TestAnAttemptThatFailsWhileSubtasksWaitForASlotEnds(t *testing.T) {
	a := newMovingAttempt(t, -1, false)
	ready, err := a.x.Restart(a.ctx, []dataflow.SubtaskID{{Vertex: 0, Subtask: 0}}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	for l := await(t, a.lines, "the wait for a slot"); !strings.Contains(l, "waiting for 1 free slots"); l = await(t, a.lines, "the wait for a slot") {
	}
	a.fail()
	if err := await(t, a.run, "the end of the attempt"); err == nil || !strings.Contains(err.Error(), "upstream backup lost") {
		t.Fatalf("the attempt ended with %v, want its share's failure", err)
	}
	await(t, ready, "the end of the restart")
	a.slotsGivenBack(t)
}

// movingAttempt is a running attempt of a job of one vertex with two
// subtasks under upstream backup, on a coordinator without a network:
// subtask 0 ran on worker w1, which was lost, and subtask 1 runs on w2,
// whose messages the test reads. With spare, a worker w3 has a free slot.
type movingAttempt struct {
	ctx    context.Context
	c      *Coordinator
	x      *remoteExecutor
	w2     *workerConn
	others []*workerConn
	lines  chan string
	run    chan error
}

func newMovingAttempt(t *testing.T, replacement time.Duration, spare bool) *movingAttempt {
	t.Helper()
	g := &plan.Graph{Parallelism: 2}
	g.AddNode(&plan.Node{Name: "events", Kind: plan.Source, Ports: 1})
	p, err := plan.Build(g)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a := &movingAttempt{ctx: ctx, lines: make(chan string, 64), run: make(chan error, 1)}
	c := &Coordinator{cfg: CoordinatorConfig{ReplacementTimeout: replacement, Log: func(l string) {
		select {
		case a.lines <- l:
		default:
		}
	}}, workers: map[string]*workerConn{}, changed: make(chan struct{}), executors: map[string]*remoteExecutor{}}
	conn := func(id string, used int) *workerConn {
		return &workerConn{c: c, id: id, dataAddr: id + ":0", slots: 1, used: used, out: make(chan *pb.CoordinatorMessage, 64),
			lost: make(chan struct{}), metrics: map[string]*pb.AttemptMetrics{}}
	}
	w1 := conn("w1", 1)
	close(w1.lost)
	a.w2 = conn("w2", 1)
	c.workers["w2"] = a.w2
	a.others = []*workerConn{w1, a.w2}
	if spare {
		w3 := conn("w3", 0)
		c.workers["w3"] = w3
		a.others = append(a.others, w3)
	}
	x := &remoteExecutor{c: c, job: &job{c: c, id: "j", executors: map[*remoteExecutor]bool{}}, key: "j/1.1", cfg: engine.Config{Plan: p},
		plan: p, spec: engine.AttemptSpec{Options: task.Options{UpstreamBackup: true}}, where: map[dataflow.SubtaskID]*share{},
		events: make(chan endEvent, 256), finished: map[dataflow.SubtaskID]bool{}, halted: make(chan struct{})}
	x.restart.init()
	lost := &share{key: x.key, w: w1, ended: true, lost: true, done: make(chan struct{}), live: true}
	close(lost.done)
	running := &share{key: x.key, w: a.w2, done: make(chan struct{}), live: true}
	x.shares = []*share{lost, running}
	x.where[dataflow.SubtaskID{Vertex: 0, Subtask: 0}] = lost
	x.where[dataflow.SubtaskID{Vertex: 0, Subtask: 1}] = running
	c.executors[x.key] = x
	a.c, a.x = c, x
	go func() { a.run <- x.Run(ctx) }()
	return a
}

// fail reports the failure of w2's share, as its worker does.
func (a *movingAttempt) fail() {
	a.x.onMessage(a.w2, &pb.WorkerMessage{Msg: &pb.WorkerMessage_Ended{Ended: &pb.AttemptEnded{Key: a.x.key,
		Error: `task "events" (subtask 1): upstream backup lost`}}})
}

// slotsGivenBack fails the test unless the ended attempt gave back every
// slot it held, its new share's included.
func (a *movingAttempt) slotsGivenBack(t *testing.T) {
	t.Helper()
	a.c.mu.Lock()
	defer a.c.mu.Unlock()
	for _, w := range a.others[1:] {
		if w.used != 0 {
			t.Errorf("worker %s has %d slots used after the attempt ended, want 0", w.id, w.used)
		}
	}
}

// hangBound is how long await waits for an event that comes within
// milliseconds unless the attempt hangs.
const hangBound = 30 * time.Second

// await returns what ch yields (or its zero value once closed), or
// fails the test with every goroutine's stack when nothing came within
// hangBound.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	deadline := time.NewTimer(hangBound)
	defer deadline.Stop()
	select {
	case v := <-ch:
		return v
	case <-deadline.C:
		t.Fatalf("waited %v for %s: it hangs; goroutines:\n%s", hangBound, what, AllStacks())
	}
	var zero T
	return zero
}
