package cluster

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// togetherCounter is an attempt's host that records each report of
// subtasks that failed together.
type togetherCounter struct {
	task.NopHost
	mu      sync.Mutex
	reports [][]dataflow.SubtaskID
}

func (h *togetherCounter) FailedTogether(ids []dataflow.SubtaskID, _ error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reports = append(h.reports, ids)
}

var _ engine.FailedTogether = (*togetherCounter)(nil)

// A lost worker's subtasks reach the engine as failed once, however many
// shares their attempt has. An executor is registered under the key of
// each of its shares (a restart's, a standby share's); the loss was
// reported once per key, and a report that reached the engine after the
// first restart had moved the subtasks (or promoted their standbys)
// restarted them again: a promoted standby then failed for want of its
// consumption order and the job fell back to a global rollback.
func TestALostWorkerIsReportedOncePerAttempt(t *testing.T) {
	c := &Coordinator{ctx: context.Background(), cfg: CoordinatorConfig{Log: func(string) {}}, workers: map[string]*workerConn{}, changed: make(chan struct{}),
		executors: map[string]*remoteExecutor{}}
	conn := func(id string) *workerConn {
		return &workerConn{c: c, id: id, dataAddr: id + ":0", slots: 1, out: make(chan *pb.CoordinatorMessage, 64),
			lost: make(chan struct{}), metrics: map[string]*pb.AttemptMetrics{}}
	}
	w1, w2 := conn("w1"), conn("w2")
	c.workers["w1"], c.workers["w2"] = w1, w2
	host := &togetherCounter{}
	x := &remoteExecutor{c: c, job: &job{c: c, id: "j", executors: map[*remoteExecutor]bool{}}, key: "j/1.1",
		spec: engine.AttemptSpec{Options: task.Options{UpstreamBackup: true, Host: host}}, where: map[dataflow.SubtaskID]*share{},
		events: make(chan endEvent, 16), finished: map[dataflow.SubtaskID]bool{}, halted: make(chan struct{})}
	first := &share{key: x.key, w: w1, done: make(chan struct{}), live: true}
	restart := &share{key: x.key + "/r1", w: w1, done: make(chan struct{}), live: true}
	standbys := &share{key: x.key + "/a1", w: w2, done: make(chan struct{}), live: true}
	x.shares = []*share{first, restart, standbys}
	x.where[dataflow.SubtaskID{Vertex: 0, Subtask: 0}] = first
	x.where[dataflow.SubtaskID{Vertex: 1, Subtask: 0}] = restart
	x.where[dataflow.SubtaskID{Vertex: 1, Subtask: 1}] = standbys
	for _, sh := range x.shares {
		c.executors[sh.key] = x
	}

	c.lose(w1, "its connection closed")
	x.wg.Wait() // the reports go to the host on goroutines of their own

	host.mu.Lock()
	defer host.mu.Unlock()
	if len(host.reports) != 1 {
		t.Fatalf("the loss of worker w1 was reported %d times (%v), want once", len(host.reports), host.reports)
	}
	want := []dataflow.SubtaskID{{Vertex: 0, Subtask: 0}, {Vertex: 1, Subtask: 0}}
	if got := host.reports[0]; !slices.Equal(got, want) {
		t.Fatalf("the loss of worker w1 failed subtasks %v, want %v", got, want)
	}
}

// A stalled attempt's report names the active standbys whose share has
// not ended, since the attempt ends only once they did: a standby share
// that was never deployed keeps it from ending while every primary has.
func TestAStallReportNamesStandbySharesThatHaveNotEnded(t *testing.T) {
	p := eventsToCount(t)
	w := &workerConn{id: "w3", out: make(chan *pb.CoordinatorMessage, 4), lost: make(chan struct{})}
	id := dataflow.SubtaskID{Vertex: 1, Subtask: 0}
	primary := &share{key: "j/1.1", w: w, ended: true, live: true, done: make(chan struct{})}
	standby := &share{key: "j/1.1/a4", w: w, done: make(chan struct{})}
	x := &remoteExecutor{job: &job{id: "j"}, key: "j/1.1", plan: p, where: map[dataflow.SubtaskID]*share{id: primary},
		standbyAt: map[dataflow.SubtaskID]*share{id: standby}, halted: make(chan struct{})}
	x.shares = []*share{primary, standby}

	waits := x.Waits(time.Millisecond)
	var got []string
	for _, w := range waits {
		got = append(got, w.String())
	}
	want := []string{
		"subtask 1.0 (count): its share on worker w3 ended",
		"active standby of subtask 1.0 (count): its standby share j/1.1/a4 on worker w3 is not deployed yet and has not ended",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the report says\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// eventsToCount returns the plan of a source "events" feeding an
// operator "count", each of parallelism 1.
func eventsToCount(t *testing.T) *plan.Plan {
	t.Helper()
	g := &plan.Graph{Parallelism: 1}
	src := g.AddNode(&plan.Node{Name: "events", Kind: plan.Source, Ports: 1})
	g.Connect(src, 0, g.AddNode(&plan.Node{Name: "count", Kind: plan.Operator, Ports: 1}), 0, plan.Rebalance, nil)
	p, err := plan.Build(g)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
