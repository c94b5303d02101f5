package cluster

import (
	"context"
	"testing"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// A subtask's end that its worker reported while the coordinator's STOP
// for it was on its way is the stopped incarnation's: the coordinator
// ignores it until the worker answered the STOP, and counts the next
// incarnation's end after. Taken for the next incarnation's, the stale
// end made the engine trigger checkpoints at it as at a finished subtask
// and take the final checkpoint before the subtask's real end.
func TestAnEndReportedBeforeAStopTookEffectIsTheStoppedIncarnations(t *testing.T) {
	g := &plan.Graph{Parallelism: 1}
	g.AddNode(&plan.Node{Name: "events", Kind: plan.Source, Ports: 1})
	p, err := plan.Build(g)
	if err != nil {
		t.Fatal(err)
	}
	id := dataflow.SubtaskID{Vertex: 0, Subtask: 0}
	c := &Coordinator{cfg: CoordinatorConfig{Log: func(string) {}}, workers: map[string]*workerConn{}, changed: make(chan struct{}),
		executors: map[string]*remoteExecutor{}}
	w := &workerConn{c: c, id: "w1", dataAddr: "w1:0", slots: 1, used: 1, out: make(chan *pb.CoordinatorMessage, 64),
		lost: make(chan struct{}), metrics: map[string]*pb.AttemptMetrics{}}
	c.workers[w.id] = w
	var ends []dataflow.SubtaskID
	x := &remoteExecutor{c: c, job: &job{c: c, id: "j", executors: map[*remoteExecutor]bool{}}, key: "j/1.1", cfg: engine.Config{Plan: p},
		plan: p, spec: engine.AttemptSpec{Options: task.Options{UpstreamBackup: true}, OnFinished: func(id dataflow.SubtaskID) { ends = append(ends, id) }},
		where: map[dataflow.SubtaskID]*share{}, events: make(chan endEvent, 256), finished: map[dataflow.SubtaskID]bool{}, halted: make(chan struct{})}
	x.restart.init()
	sh := &share{key: x.key, w: w, done: make(chan struct{}), live: true}
	x.shares = []*share{sh}
	x.where[id] = sh
	finished := &pb.WorkerMessage{Msg: &pb.WorkerMessage_Finished{Finished: &pb.SubtaskFinished{Key: x.key, Subtask: ref(id)}}}

	x.Stop([]dataflow.SubtaskID{id})
	stop := <-w.out
	if stop.GetCommand().GetKind() != pb.Command_STOP {
		t.Fatalf("the worker was sent %v, want STOP", stop)
	}
	x.onMessage(w, finished) // sent before the worker applied the STOP
	if len(ends) != 0 || x.Finished(id) {
		t.Fatalf("an end reported before the worker answered the STOP counts as the subtask's end (%v)", ends)
	}
	x.onMessage(w, &pb.WorkerMessage{Msg: &pb.WorkerMessage_Stopped{Stopped: &pb.Stopped{Key: x.key, Subtasks: stop.GetCommand().Subtasks}}})
	x.onMessage(w, finished) // the next incarnation's
	if len(ends) != 1 || ends[0] != id {
		t.Fatalf("the end of the incarnation after the stop was passed on as %v, want [%v]", ends, id)
	}
}

// A worker answers a STOP only once its runtime stopped the subtasks,
// and reports no end of a subtask its runtime no longer counts as
// finished: an end noted before the stop and reported after it would
// reach the coordinator after the answer, as the next incarnation's.
func TestAWorkerReportsNoEndOfAStoppedIncarnationAfterItsStop(t *testing.T) {
	id := dataflow.SubtaskID{Vertex: 0, Subtask: 0}
	s := &agent{ctx: context.Background(), out: make(chan *pb.WorkerMessage, 4)}
	a := newWorkerAttempt(s, &pb.Deploy{Key: "j/1.1"}, 1)
	finished := map[dataflow.SubtaskID]bool{id: true} // noted its end
	stopped := false
	a.stop(func(ids []dataflow.SubtaskID) {
		stopped = true
		for _, id := range ids {
			delete(finished, id) // as task.Runtime.Stop forgets the end
		}
	}, []dataflow.SubtaskID{id}, []*pb.SubtaskRef{ref(id)})
	if !stopped {
		t.Fatal("the STOP did not stop the subtask")
	}
	if m := <-s.out; m.GetStopped() == nil {
		t.Fatalf("the worker sent %v after the stop, want the STOP's answer", m)
	}
	// The stopped incarnation reports the end it noted before the stop.
	a.reportFinished(func(id dataflow.SubtaskID) bool { return finished[id] }, id)
	select {
	case m := <-s.out:
		t.Fatalf("the worker reported %v after answering the STOP", m)
	default:
	}
	finished[id] = true // the next incarnation's end
	a.reportFinished(func(id dataflow.SubtaskID) bool { return finished[id] }, id)
	if m := <-s.out; m.GetFinished() == nil {
		t.Fatalf("the worker sent %v, want the next incarnation's end", m)
	}
}
