package cluster

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// Placement takes as many slots of each worker as taking one of each in
// turn would, and gives each worker consecutive slots.
func TestPlacementGivesEachWorkerConsecutiveSlots(t *testing.T) {
	ws := []*workerConn{{id: "w1", slots: 3}, {id: "w2", slots: 3, used: 1}, {id: "w3", slots: 2}}
	got := ids(placeLocked(ws, 6))
	if want := []string{"w1", "w1", "w2", "w2", "w3", "w3"}; !slices.Equal(got, want) {
		t.Fatalf("slots %v, want %v", got, want)
	}
	if ws[0].used != 2 || ws[1].used != 3 || ws[2].used != 2 {
		t.Fatalf("slots used %d, %d, %d, want 2, 3, 2", ws[0].used, ws[1].used, ws[2].used)
	}
	// Beyond the free slots, the rest is spread over the workers in turn.
	ws = []*workerConn{{id: "w1", slots: 2, used: 1}, {id: "w2", slots: 2, used: 2}}
	if got, want := ids(spreadLocked(ws, 4)), []string{"w1", "w1", "w1", "w2"}; !slices.Equal(got, want) {
		t.Fatalf("spread slots %v, want %v", got, want)
	}
}

func ids(ws []*workerConn) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.id)
	}
	return out
}

// A deployment's placement names each share's consecutive subtasks of a
// task in one run, and a worker finds every subtask's endpoint in it, and
// every standby's.
func TestPlacementRunsRoundTrip(t *testing.T) {
	ws := []*workerConn{{id: "w1", dataAddr: "w1:1", slots: 4}, {id: "w2", dataAddr: "w2:1", slots: 4}, {id: "w3", dataAddr: "w3:1", slots: 4}}
	slots := placeLocked(ws, 10)
	shares := map[*workerConn]*share{}
	where, standbyAt := map[dataflow.SubtaskID]*share{}, map[dataflow.SubtaskID]*share{}
	for v, par := range []int{10, 7} { // a task of lower parallelism takes the first slots
		for i := range par {
			w := slots[i]
			if shares[w] == nil {
				shares[w] = &share{key: "j/1.1", w: w}
			}
			where[dataflow.SubtaskID{Vertex: v, Subtask: i}] = shares[w]
		}
	}
	// A subtask restarted elsewhere splits its worker's run.
	moved := &share{key: "j/1.1/r1", w: ws[2]}
	where[dataflow.SubtaskID{Vertex: 0, Subtask: 1}] = moved
	standby := &share{key: "j/1.1/a1", w: ws[1]}
	for i := range 3 {
		standbyAt[dataflow.SubtaskID{Vertex: 1, Subtask: i}] = standby
	}

	runs := append(placementRuns(where, false), placementRuns(standbyAt, true)...)
	var got []string
	for _, r := range runs {
		got = append(got, fmt.Sprintf("%d.%d+%d@%s/%s/%v", r.Vertex, r.First, r.Count, r.DataAddr, r.DataKey, r.Standby))
	}
	want := []string{
		"0.0+1@w1:1/j/1.1/false", "0.1+1@w3:1/j/1.1/r1/false", "0.2+2@w1:1/j/1.1/false", "0.4+3@w2:1/j/1.1/false", "0.7+3@w3:1/j/1.1/false",
		"1.0+4@w1:1/j/1.1/false", "1.4+3@w2:1/j/1.1/false",
		"1.0+3@w2:1/j/1.1/a1/true",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("runs\n%v\nwant\n%v", got, want)
	}

	// Through the wire, a worker finds where each subtask and standby runs.
	b, err := proto.Marshal(&pb.Deploy{Key: "j/1.1", Placement: runs})
	if err != nil {
		t.Fatal(err)
	}
	var d pb.Deploy
	if err := proto.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	a := newWorkerAttempt(nil, &d, 1)
	a.placeAll(d.Placement)
	if len(a.addr) != len(where) || len(a.keys) != len(where) || len(a.standbyAt) != len(standbyAt) {
		t.Fatalf("the worker placed %d subtasks (%d keys) and %d standbys, want %d and %d", len(a.addr), len(a.keys), len(a.standbyAt), len(where), len(standbyAt))
	}
	for id, sh := range where {
		if a.addr[id] != sh.w.dataAddr || a.keys[id] != sh.key {
			t.Errorf("subtask %s placed at %s/%s, want %s/%s", id, a.addr[id], a.keys[id], sh.w.dataAddr, sh.key)
		}
	}
	for id, sh := range standbyAt {
		if pl := a.standbyAt[id]; pl.GetDataAddr() != sh.w.dataAddr || pl.GetDataKey() != sh.key || sid(pl.GetSubtask()) != id {
			t.Errorf("standby of subtask %s placed at %v, want %s/%s", id, pl, sh.w.dataAddr, sh.key)
		}
	}
}

// A share is sent the state of its own subtasks only, with the rest of
// the checkpoint's metadata; after a rescale, the state of every old
// subtask whose key groups its subtasks take.
func TestShareRestoreHoldsTheStateTheShareReads(t *testing.T) {
	p := keyedPlan(t, 4)
	m := checkpointOf(p, map[int]int{0: 4, 1: 4})
	got := restoredTasks(t, m, p, dataflow.SubtaskID{Vertex: 0, Subtask: 2}, dataflow.SubtaskID{Vertex: 1, Subtask: 2})
	if want := []string{"0.2", "1.2"}; !slices.Equal(got, want) {
		t.Fatalf("tasks sent %v, want %v", got, want)
	}
	// Taken at parallelism 2: new subtasks 2 and 3 of the keyed task take
	// old subtask 1's key groups; a source's positions need all of its.
	m = checkpointOf(p, map[int]int{0: 2, 1: 2})
	if got, want := restoredTasks(t, m, p, dataflow.SubtaskID{Vertex: 1, Subtask: 3}), []string{"1.1"}; !slices.Equal(got, want) {
		t.Fatalf("rescaled: tasks sent %v, want %v", got, want)
	}
	if got, want := restoredTasks(t, m, p, dataflow.SubtaskID{Vertex: 0, Subtask: 3}), []string{"0.0", "0.1"}; !slices.Equal(got, want) {
		t.Fatalf("rescaled source: tasks sent %v, want %v", got, want)
	}
	if b, err := shareRestore(nil, p, false, nil); b != nil || err != nil {
		t.Fatalf("nothing to restore: got %q, %v", b, err)
	}
}

// keyed is the implementation of a keyed operator, whose state a rescale
// redistributes by key group.
type keyed struct{}

func (keyed) Redistribution() task.Redistribution { return task.ByKeyGroup }

// keyedPlan is a source hashed into a keyed task, at parallelism par.
func keyedPlan(t *testing.T, par int) *plan.Plan {
	t.Helper()
	g := &plan.Graph{Parallelism: par}
	src := g.AddNode(&plan.Node{Name: "events", Kind: plan.Source, Ports: 1})
	count := g.AddNode(&plan.Node{Name: "count", Kind: plan.Operator, Ports: 1, Keyed: true, Impl: keyed{}})
	g.Connect(src, 0, count, 0, plan.Hash, nil)
	p, err := plan.Build(g)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkpointOf is a checkpoint of p's operators taken at parallelism par
// (by vertex), with a handle per subtask.
func checkpointOf(p *plan.Plan, par map[int]int) *store.Metadata {
	m := &store.Metadata{Job: "j", ID: 7, Fingerprint: "f", Parallelism: par, MaxParallelism: p.MaxParallelism, Run: "r"}
	for _, v := range p.Vertices {
		for _, n := range v.Chain {
			m.Operators = append(m.Operators, store.Operator{Vertex: v.ID, ID: n.ID, Name: n.Name, UID: p.UID(n)})
		}
		for i := range par[v.ID] {
			id := dataflow.SubtaskID{Vertex: v.ID, Subtask: i}
			m.Tasks = append(m.Tasks, store.TaskState{Task: id, Handles: []store.Handle{{Key: "state/" + id.String(), Size: 1}}})
		}
	}
	return m
}

// restoredTasks returns the tasks whose state shareRestore sends a share
// of subtasks ids, checking that the rest of m is sent whole.
func restoredTasks(t *testing.T, m *store.Metadata, p *plan.Plan, ids ...dataflow.SubtaskID) []string {
	t.Helper()
	b, err := shareRestore(m, p, false, ids)
	if err != nil {
		t.Fatal(err)
	}
	var got store.Metadata
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ts := range got.Tasks {
		if len(ts.Handles) != 1 || ts.Handles[0].Key != "state/"+ts.Task.String() {
			t.Fatalf("task %s sent with handles %v", ts.Task, ts.Handles)
		}
		out = append(out, fmt.Sprintf("%d.%d", ts.Task.Vertex, ts.Task.Subtask))
	}
	got.Tasks, m = nil, &store.Metadata{Job: m.Job, ID: m.ID, Fingerprint: m.Fingerprint, Parallelism: m.Parallelism,
		MaxParallelism: m.MaxParallelism, Operators: m.Operators, Run: m.Run}
	if a, b := fmt.Sprint(got), fmt.Sprint(*m); a != b {
		t.Fatalf("the rest of the checkpoint sent as\n%s\nwant\n%s", a, b)
	}
	return out
}
