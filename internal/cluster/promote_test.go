package cluster

import (
	"context"
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
)

// A standby share ends by itself once its last active standby stopped.
// When the last one stops as the order to take over travels to it (an
// injected failure of the standby as its primary's worker is lost), the
// share ends without answering, and the subtask it was to run runs
// nowhere. The restart must fail then (the job falls back to a global
// rollback) rather than count the subtask as restarted: the job stalled
// so, with every other subtask waiting for its replay.
func TestAPromotionToAShareThatEndedFailsTheRestart(t *testing.T) {
	p := eventsToCount(t)
	c := &Coordinator{ctx: context.Background(), cfg: CoordinatorConfig{Log: func(string) {}}, executors: map[string]*remoteExecutor{}}
	conn := func(id string) *workerConn {
		return &workerConn{c: c, id: id, dataAddr: id + ":0", slots: 1, out: make(chan *pb.CoordinatorMessage, 64), lost: make(chan struct{})}
	}
	w1, w2 := conn("w1"), conn("w2")
	source, count := dataflow.SubtaskID{Vertex: 0, Subtask: 0}, dataflow.SubtaskID{Vertex: 1, Subtask: 0}
	lost := &share{key: "j/1.1", w: w1, done: make(chan struct{}), live: true, ended: true, lost: true}
	close(lost.done)
	close(w1.lost)
	sources := &share{key: "j/1.1/r1", w: w2, done: make(chan struct{}), live: true}
	standbys := &share{key: "j/1.1/a1", w: w2, done: make(chan struct{}), live: true, standbys: true}
	x := &remoteExecutor{c: c, job: &job{c: c, id: "j"}, key: "j/1.1", plan: p,
		where:     map[dataflow.SubtaskID]*share{source: sources, count: lost},
		standbyAt: map[dataflow.SubtaskID]*share{count: standbys},
		finished:  map[dataflow.SubtaskID]bool{}, halted: make(chan struct{})}
	x.restart.init()
	x.shares = []*share{lost, sources, standbys}

	// Worker w2 answers the MOVE of each of its shares; the standby share
	// ends, unanswered, when the order to promote reaches it.
	promoted := make(chan struct{})
	go func() {
		for m := range w2.out {
			cmd := m.GetCommand()
			switch {
			case cmd == nil:
			case cmd.Kind == pb.Command_MOVE:
				x.answer(cmd.Token, &pb.Moved{})
			case cmd.Kind == pb.Command_PROMOTE:
				x.mu.Lock()
				standbys.ended = true
				close(standbys.done)
				x.mu.Unlock()
				close(promoted)
				return
			}
		}
	}()
	err := x.restartTasks(context.Background(), []dataflow.SubtaskID{count}, nil, 1)
	<-promoted
	if err == nil || !strings.Contains(err.Error(), "share j/1.1/a1 on worker w2 ended before it ran the subtasks it was to run") {
		t.Fatalf("restarting the count subtask through a standby share that ended: %v, want the share named", err)
	}
}

// A standby ends by itself when it applies its primary's logged end of
// input. Once every share that runs subtasks ended (released after the
// final checkpoint), a standby that has not seen that end (the shipping
// of its primary's log ended with the primary's share) is dismissed: its
// share is cancelled, and its end is no failure. The attempt waited for
// it for ever, and the job stalled with every subtask finished.
func TestAStandbyShareIsDismissedOnceEveryPrimaryEnded(t *testing.T) {
	c := &Coordinator{ctx: context.Background(), cfg: CoordinatorConfig{Log: func(string) {}}, executors: map[string]*remoteExecutor{}, changed: make(chan struct{})}
	conn := func(id string) *workerConn {
		return &workerConn{c: c, id: id, dataAddr: id + ":0", slots: 1, out: make(chan *pb.CoordinatorMessage, 64), lost: make(chan struct{}),
			metrics: map[string]*pb.AttemptMetrics{}}
	}
	w1, w2 := conn("w1"), conn("w2")
	source, count := dataflow.SubtaskID{Vertex: 0, Subtask: 0}, dataflow.SubtaskID{Vertex: 1, Subtask: 0}
	primaries := &share{key: "j/1.1", w: w1, done: make(chan struct{}), live: true}
	standbys := &share{key: "j/1.1/a1", w: w2, done: make(chan struct{}), live: true, standbys: true}
	x := &remoteExecutor{c: c, job: &job{c: c, id: "j", executors: map[*remoteExecutor]bool{}}, key: "j/1.1",
		where:     map[dataflow.SubtaskID]*share{source: primaries, count: primaries},
		standbyAt: map[dataflow.SubtaskID]*share{count: standbys},
		events:    make(chan endEvent, 4), finished: map[dataflow.SubtaskID]bool{}, halted: make(chan struct{})}
	x.restart.init()
	x.shares = []*share{primaries, standbys}
	ran := make(chan error, 1)
	go func() { ran <- x.Run(context.Background()) }()

	x.post(endEvent{primaries, nil}) // released after the final checkpoint
	cmd := (<-w2.out).GetCommand()
	if cmd == nil || cmd.Kind != pb.Command_CANCEL || cmd.Key != standbys.key {
		t.Fatalf("worker w2 was sent %v, want the cancellation of the standby share", cmd)
	}
	x.post(endEvent{standbys, context.Canceled}) // what its worker reports then
	if err := <-ran; err != nil {
		t.Fatalf("the attempt ended with %v, want no failure", err)
	}
}
