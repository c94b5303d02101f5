package task

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/input"
	"github.com/weir-stream/weir/internal/plan"
)

// stateNode is a NodeImpl that only says how its state moves.
type stateNode struct {
	NodeImpl
	how Redistribution
}

func (n stateNode) Redistribution() Redistribution { return n.how }

// positionNode moves positions by joining them all into subtask 0's.
type positionNode struct{ NodeImpl }

func (positionNode) RescalePositions(old [][]byte, n int) ([][]byte, error) {
	out := make([][]byte, n)
	out[0] = slices.Concat(old...)
	return out, nil
}

// onePlan is a plan of one vertex of parallelism n, max parallelism 4,
// chaining nodes with ids 0, 1, ... named after them.
func onePlan(n int, nodes ...*plan.Node) *plan.Plan {
	for i, nd := range nodes {
		nd.ID = i
	}
	return &plan.Plan{MaxParallelism: 4, Vertices: []*plan.Vertex{{ID: 0, Parallelism: n, Chain: nodes}}}
}

// oldState returns the snapshots of n subtasks of vertex 0, subtask i
// holding state "s<i>" for every node id given, and the given sections.
func oldState(n int, ids []int, more func(i int) []byte) map[dataflow.SubtaskID][]byte {
	out := map[dataflow.SubtaskID][]byte{}
	for i := range n {
		var data []byte
		for _, id := range ids {
			data = appendSection(data, sectionOperator, id, []byte{'s', byte('0' + i)})
		}
		data = appendSection(data, sectionCounts, 0, []byte{5, 7})
		if more != nil {
			data = append(data, more(i)...)
		}
		out[dataflow.SubtaskID{Subtask: i}] = data
	}
	return out
}

// restored decodes what Rescale gave new subtask j: the state blobs of
// node id and the position.
func restored(t *testing.T, got map[dataflow.SubtaskID][]byte, j, id int) ([]string, string) {
	t.Helper()
	snap, err := decodeSubtaskSnapshot(got[dataflow.SubtaskID{Subtask: j}])
	if err != nil {
		t.Fatal(err)
	}
	if snap.counts != nil || snap.wms != nil || snap.controls != nil {
		t.Errorf("subtask %d keeps the old channels' counts or watermarks", j)
	}
	var blobs []string
	for _, b := range snap.operators[id] {
		blobs = append(blobs, string(b))
	}
	return blobs, string(snap.position)
}

// Keyed state goes to every new subtask whose key groups overlap the old
// subtask's; a sink's goes whole to old index mod new parallelism.
func TestRescaleDealsStateByKeyGroupOrWhole(t *testing.T) {
	p := onePlan(3, &plan.Node{Name: "count", Kind: plan.Operator, Impl: stateNode{how: ByKeyGroup}}, &plan.Node{Name: "output", Kind: plan.Sink, Impl: stateNode{how: Reassigned}})
	// Old: 2 subtasks owning key groups [0,2) and [2,4); new: [0,2), [2,3), [3,4).
	got, err := Rescale(p, sameOrigin(p, map[int]int{0: 2}), oldState(2, []int{0, 1}, nil))
	if err != nil {
		t.Fatal(err)
	}
	for j, want := range [][2][]string{{{"s0"}, {"s0"}}, {{"s1"}, {"s1"}}, {{"s1"}, nil}} {
		keyed, _ := restored(t, got, j, 0)
		whole, _ := restored(t, got, j, 1)
		if !slices.Equal(keyed, want[0]) || !slices.Equal(whole, want[1]) {
			t.Errorf("subtask %d of 3 restores keyed %v and whole %v, want %v and %v", j, keyed, whole, want[0], want[1])
		}
	}
	// Down to 1: everything to subtask 0.
	p = onePlan(1, &plan.Node{Name: "count", Kind: plan.Operator, Impl: stateNode{how: ByKeyGroup}}, &plan.Node{Name: "output", Kind: plan.Sink, Impl: stateNode{how: Reassigned}})
	got, err = Rescale(p, sameOrigin(p, map[int]int{0: 3}), oldState(3, []int{0, 1}, nil))
	if err != nil {
		t.Fatal(err)
	}
	for id := range 2 {
		if blobs, _ := restored(t, got, 0, id); !slices.Equal(blobs, []string{"s0", "s1", "s2"}) {
			t.Errorf("node %d restores %v, want all three", id, blobs)
		}
	}
}

func TestRescaleMovesSourcePositions(t *testing.T) {
	p := onePlan(2, &plan.Node{Name: "events", Kind: plan.Source, Impl: positionNode{}})
	old := oldState(3, nil, func(i int) []byte { return appendSection(nil, sectionPosition, 0, []byte{byte('a' + i)}) })
	got, err := Rescale(p, sameOrigin(p, map[int]int{0: 3}), old)
	if err != nil {
		t.Fatal(err)
	}
	if _, pos := restored(t, got, 0, 0); pos != "abc" {
		t.Errorf("subtask 0 starts at %q, want abc", pos)
	}
	if _, pos := restored(t, got, 1, 0); pos != "" {
		t.Errorf("subtask 1 starts at %q, want the empty position the source gave it", pos)
	}
}

func TestRescaleRefusesWhatCannotMove(t *testing.T) {
	inflight := func(int) []byte {
		return appendSection(nil, sectionChannels, 0, encodeBuffers([]*exchange.Buffer{{B: []byte{1}, N: 1}}))
	}
	for _, c := range []struct {
		name string
		p    *plan.Plan
		old  map[dataflow.SubtaskID][]byte
		says string
	}{
		{"records in flight", onePlan(3, &plan.Node{Name: "count", Kind: plan.Operator, Impl: stateNode{how: ByKeyGroup}}), oldState(2, []int{0}, inflight),
			`the checkpoint's task 0 (count) holds records in flight (an unaligned checkpoint), which belong to channels of its plan and parallelism 2`},
		{"state that cannot move", onePlan(3, &plan.Node{Name: "count", Kind: plan.Operator, Impl: stateNode{}}), oldState(2, []int{0}, nil),
			`operator "count" holds state that cannot move to another parallelism: restore task "count" with parallelism 2`},
		{"a source that cannot move", onePlan(3, &plan.Node{Name: "events", Kind: plan.Source, Impl: stateNode{}}), oldState(2, nil, nil),
			`source "events" cannot move its positions to another parallelism: restore it with parallelism 2`},
	} {
		_, err := Rescale(c.p, sameOrigin(c.p, map[int]int{0: 2}), c.old)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.says)
		}
	}
}

// A new subtask takes the lowest input and output watermarks of the old
// subtasks, with each of its channels active at that input watermark.
// A new subtask of keyed state takes the lowest watermarks of the old
// subtasks whose key groups it takes (its records are of those key
// groups); one of a task without keyed state, those of all of them.
func TestRescaleTakesTheLowestWatermarks(t *testing.T) {
	for _, c := range []struct {
		how  Redistribution
		want []int64 // per new subtask
	}{
		{ByKeyGroup, []int64{50, 30}}, // [0,2) from old 0; [2,4) from old 1 and 2
		{Reassigned, []int64{30, 30}},
	} {
		up := &plan.Vertex{ID: 1, Parallelism: 3}
		p := onePlan(2, &plan.Node{Name: "count", Kind: plan.Operator, Impl: stateNode{how: c.how}})
		p.Vertices[0].Inputs = []*plan.PhysicalEdge{{Source: up, Partitioning: plan.Hash}}
		was := map[int]int{0: 3}
		wms := []int64{50, 30, 40}
		old := oldState(3, []int{0}, func(i int) []byte {
			return appendSection(nil, sectionWatermarks, 0, appendWatermarks(nil, &input.Watermarks{Input: wms[i],
				Channels: []input.ChannelMark{{Watermark: wms[i]}, {Watermark: wms[i] + 5, State: input.ChanIdle}}}, wms[i]-1))
		})
		p.Vertices = p.Vertices[:1]
		got, err := Rescale(p, sameOrigin(p, was), old)
		if err != nil {
			t.Fatal(err)
		}
		for j := range 2 {
			snap, err := decodeSubtaskSnapshot(got[dataflow.SubtaskID{Subtask: j}])
			if err != nil {
				t.Fatal(err)
			}
			w := c.want[j]
			want := appendWatermarks(nil, &input.Watermarks{Input: w, Channels: []input.ChannelMark{{Watermark: w}, {Watermark: w}, {Watermark: w}}}, w-1)
			if string(snap.wms) != string(want) {
				t.Errorf("%v state: subtask %d restores watermarks %x, want %x (input watermark %d)", c.how, j, snap.wms, want, w)
			}
		}
	}
}

// A restore of some subtasks at another parallelism reads only the old
// subtasks whose state they take: keyed state and watermarks from those
// whose key groups overlap theirs, a sink's transactions from old index
// mod new parallelism, a source's positions from all.
func TestNeededNamesOnlyTheOldSubtasksARestoreTakes(t *testing.T) {
	src := &plan.Node{ID: 0, Name: "events", Kind: plan.Source, Impl: positionNode{}}
	count := &plan.Node{ID: 1, Name: "count", Kind: plan.Operator, Impl: stateNode{how: ByKeyGroup}}
	out := &plan.Node{ID: 2, Name: "output", Kind: plan.Sink, Impl: stateNode{how: Reassigned}}
	sv := &plan.Vertex{ID: 0, Parallelism: 2, Chain: []*plan.Node{src}}
	kv := &plan.Vertex{ID: 1, Parallelism: 4, Chain: []*plan.Node{count, out}}
	e := &plan.PhysicalEdge{Source: sv, Target: kv, Partitioning: plan.Hash}
	sv.Outputs, kv.Inputs = []*plan.PhysicalEdge{e}, []*plan.PhysicalEdge{e}
	p := &plan.Plan{MaxParallelism: 4, Vertices: []*plan.Vertex{sv, kv}}
	from := sameOrigin(p, map[int]int{0: 2, 1: 2})
	id := func(v, i int) dataflow.SubtaskID { return dataflow.SubtaskID{Vertex: v, Subtask: i} }
	for _, c := range []struct {
		want dataflow.SubtaskID
		need []dataflow.SubtaskID
	}{
		{id(1, 0), []dataflow.SubtaskID{id(1, 0)}},           // key group 0 of old [0,2); transactions of old 0
		{id(1, 1), []dataflow.SubtaskID{id(1, 0), id(1, 1)}}, // key group 1 of old [0,2); transactions of old 1
		{id(1, 3), []dataflow.SubtaskID{id(1, 1)}},           // key group 3 of old [2,4); none
		{id(0, 1), []dataflow.SubtaskID{id(0, 0), id(0, 1)}}, // a source: all positions
	} {
		got := Needed(p, from, func(s dataflow.SubtaskID) bool { return s == c.want })
		if len(got) != len(c.need) {
			t.Errorf("a restore of %v needs %v, want %v", c.want, got, c.need)
			continue
		}
		for _, n := range c.need {
			if !got[n] {
				t.Errorf("a restore of %v needs %v, want %v", c.want, got, c.need)
			}
		}
	}
}

// sameOrigin is the origin of a checkpoint taken by p itself, at the
// parallelism was.
func sameOrigin(p *plan.Plan, was map[int]int) Origin {
	o := Origin{Parallelism: was, Nodes: map[int]OldNode{}}
	for _, v := range p.Vertices {
		for _, n := range v.Chain {
			o.Nodes[n.ID] = OldNode{Vertex: v.ID, ID: n.ID, Name: n.Name, UID: n.Name}
		}
	}
	return o
}

// A changed plan takes each operator's state by uid: an operator chained
// into another task or given another node ID keeps its state, a new one
// starts empty, and state of a removed one fails the restore unless it
// may be dropped.
func TestRescaleMovesStateByOperatorUID(t *testing.T) {
	// New plan: one task "count -> added" at parallelism 2; the checkpoint
	// had "gone -> count" (node IDs 0 and 1) in its task 0, also at 2.
	p := onePlan(2, &plan.Node{Name: "count", Kind: plan.Operator, Impl: stateNode{how: ByKeyGroup}},
		&plan.Node{Name: "added", Kind: plan.Operator, Impl: stateNode{how: ByKeyGroup}})
	old := map[dataflow.SubtaskID][]byte{}
	for i := range 2 {
		var data []byte
		data = appendSection(data, sectionOperator, 0, []byte(fmt.Sprintf("gone%d", i)))
		data = appendSection(data, sectionOperator, 1, []byte(fmt.Sprintf("count%d", i)))
		old[dataflow.SubtaskID{Subtask: i}] = data
	}
	from := Origin{Parallelism: map[int]int{0: 2},
		Nodes:     map[int]OldNode{0: {Vertex: 0, ID: 1, Name: "count", UID: "count"}},
		Unclaimed: []OldNode{{Vertex: 0, ID: 0, Name: "gone", UID: "gone"}}}
	_, err := Rescale(p, from, old)
	want := `the checkpoint holds state of operator "gone" (uid "gone"), which this job has no operator with that uid for`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--allow-non-restored-state") {
		t.Fatalf("restore without the removed operator: error %v, want one saying %q and naming --allow-non-restored-state", err, want)
	}
	from.DropUnclaimed = true
	got, err := Rescale(p, from, old)
	if err != nil {
		t.Fatal(err)
	}
	for j := range 2 {
		if blobs, _ := restored(t, got, j, 0); !slices.Equal(blobs, []string{fmt.Sprintf("count%d", j)}) {
			t.Errorf("subtask %d: count restores %v, want its own old state", j, blobs)
		}
		if blobs, _ := restored(t, got, j, 1); blobs != nil {
			t.Errorf("subtask %d: the added operator restores %v, want nothing", j, blobs)
		}
	}
}
