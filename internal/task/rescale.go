package task

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/input"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
)

// This file moves a checkpoint's snapshots to another parallelism: the
// state of old subtasks is dealt out to the new ones by key group (keyed
// state) or whole (a sink's transactions), and sources move their
// positions through their connector.

// Redistribution says how an operator's state moves to the subtasks of a
// new parallelism when a checkpoint is restored at another one.
type Redistribution int

const (
	// NotRedistributable state restores only at the parallelism it was
	// taken with: a restore at another one is refused.
	NotRedistributable Redistribution = iota
	// ByKeyGroup state is keyed: a new subtask gets the state of every
	// old subtask whose key groups overlap its own, one Restore call per
	// old subtask, and keeps the entries of its own key groups.
	ByKeyGroup
	// Reassigned state belongs to no key: each old subtask's state goes
	// whole to one new subtask, old index mod new parallelism, so that
	// nothing is lost or restored twice (a two-phase-commit sink's
	// pending transactions).
	Reassigned
	// Union state belongs to no key and is pooled: every new subtask
	// restores the state of every old subtask, one Restore call per old
	// subtask in their order, and keeps what it needs of it (operator
	// list state, split evenly or whole).
	Union
)

// Redistributable is an optional ability of a NodeImpl whose operator is
// a Snapshotter: how its state moves when the node's task restores at
// another parallelism. A node without it restores state only at the same
// parallelism.
type Redistributable interface {
	Redistribution() Redistribution
}

// PositionRescaler is an optional ability of a source NodeImpl: it moves
// the positions of a checkpoint's old subtasks (old[i], nil for one at
// the beginning) to n new subtasks, returning n positions (see
// connector.Rescaler). A source without it restores only at the same
// parallelism.
type PositionRescaler interface {
	RescalePositions(old [][]byte, n int) ([][]byte, error)
}

// Origin says where a checkpoint's state lies for the plan it restores:
// the tasks the checkpoint's operators ran in and at which parallelism,
// and which of its operators each node of the plan takes the state of
// (the one with the node's uid).
type Origin struct {
	// Parallelism is the checkpoint's number of subtasks per vertex ID
	// (of the checkpoint's plan).
	Parallelism map[int]int
	// Nodes maps a node ID of the plan to the checkpoint's operator with
	// its uid. A node without one is new and starts empty (a new source
	// at its beginning).
	Nodes map[int]OldNode
	// Unclaimed are the checkpoint's operators whose uid no node of the
	// plan has.
	Unclaimed []OldNode
	// DropUnclaimed lets the state of unclaimed operators go; without it
	// a restore fails on it (--allow-non-restored-state).
	DropUnclaimed bool
}

// OldNode is an operator of a checkpoint: its task (vertex ID) and node
// ID in the checkpoint's plan, with its name and uid for messages.
type OldNode struct {
	Vertex, ID int
	Name, UID  string
}

// Rescale returns the snapshots that restore the subtasks of p from a
// checkpoint laid out as from says; old holds the checkpoint's snapshots
// by subtask (of the checkpoint's plan). The engine calls it when the
// checkpoint was taken at another parallelism of some task, or by a
// plan whose operators differ (added, removed, chained differently).
//
// Each node of p takes the state of the checkpoint's operator with its
// uid: whole, old subtask i to new subtask i, when the parallelism is
// the one it had; otherwise dealt out by key group (keyed state) or
// reassigned (a sink's transactions). A source moves its positions
// through its connector when its parallelism changed. A node with no
// operator of its uid in the checkpoint starts empty.
//
// A rescaled restore restores the whole job and starts every channel
// afresh: the snapshots it returns hold operator state, source positions
// and watermarks (see rescaleWatermarks, from the task that held the
// state of each new task's first operator), no record counts or control
// counts of the old channels, and no state of sources' watermark
// generators. It fails, naming the task or operator, when a snapshot
// holds in-flight records (an unaligned checkpoint: those belong to
// channels that no longer exist), when an operator's state is
// NotRedistributable, when a source cannot move its positions, or when
// an unclaimed operator holds state and from.DropUnclaimed is false.
func Rescale(p *plan.Plan, from Origin, old map[dataflow.SubtaskID][]byte) (map[dataflow.SubtaskID][]byte, error) {
	snaps, err := decodeOld(from, old)
	if err != nil {
		return nil, err
	}
	if err := checkUnclaimed(from, snaps); err != nil {
		return nil, err
	}
	out := map[dataflow.SubtaskID][]byte{}
	for _, v := range p.Vertices {
		newN := v.Parallelism
		per := make([][]byte, newN)
		head, hasHead := from.Nodes[v.Head().ID]
		if hasHead {
			hs := snaps[head.Vertex]
			if v.Head().Kind == plan.Source {
				positions, err := rescalePositions(v, hs, newN)
				if err != nil {
					return nil, err
				}
				for j, pos := range positions {
					if pos != nil {
						per[j] = appendSection(per[j], sectionPosition, 0, pos)
					}
				}
			}
			channels := v.InputChannels()
			for j := range newN {
				takes := watermarkTakes(v, p.MaxParallelism, len(hs), j)
				if wms, err := rescaleWatermarks(hs, takes, channels); err != nil {
					return nil, fmt.Errorf("task %q: %w", v.Name(), err)
				} else if wms != nil {
					per[j] = appendSection(per[j], sectionWatermarks, 0, wms)
				}
			}
		}
		for _, n := range v.Chain {
			o, ok := from.Nodes[n.ID]
			if !ok {
				continue // new: starts empty
			}
			deal, err := rescaleOperator(p.MaxParallelism, v, n, o, snaps[o.Vertex], newN)
			if err != nil {
				return nil, err
			}
			for j, takes := range deal {
				for _, i := range takes {
					for _, blob := range snaps[o.Vertex][i].operators[o.ID] {
						per[j] = appendSection(per[j], sectionOperator, n.ID, blob)
					}
				}
			}
		}
		for j, data := range per {
			out[dataflow.SubtaskID{Vertex: v.ID, Subtask: j}] = data
		}
	}
	return out, nil
}

// decodeOld decodes the checkpoint's snapshots by old vertex and subtask,
// refusing any that holds records in flight.
func decodeOld(from Origin, old map[dataflow.SubtaskID][]byte) (map[int][]*subtaskSnapshot, error) {
	names := map[int]string{}
	for _, o := range append(slices.Collect(maps.Values(from.Nodes)), from.Unclaimed...) {
		if names[o.Vertex] != "" {
			names[o.Vertex] += ", "
		}
		names[o.Vertex] += o.Name
	}
	snaps := map[int][]*subtaskSnapshot{}
	for v, n := range from.Parallelism {
		snaps[v] = make([]*subtaskSnapshot, n)
		for i := range n {
			snap, err := decodeSubtaskSnapshot(old[dataflow.SubtaskID{Vertex: v, Subtask: i}])
			if err != nil {
				return nil, fmt.Errorf("the checkpoint's task %d (%s), subtask %d: %w", v, names[v], i, err)
			}
			if len(snap.inputs) > 0 || len(snap.outputs) > 0 {
				return nil, fmt.Errorf("the checkpoint's task %d (%s) holds records in flight (an unaligned checkpoint), which belong to channels of its plan and parallelism %d: restore it into the same job at the same parallelism, or restore from a checkpoint without records in flight (taken without --unaligned)",
					v, names[v], n)
			}
			snaps[v][i] = snap
		}
	}
	return snaps, nil
}

// checkUnclaimed fails if an operator no node takes the state of holds
// state, unless from lets it go.
func checkUnclaimed(from Origin, snaps map[int][]*subtaskSnapshot) error {
	if from.DropUnclaimed {
		return nil
	}
	for _, o := range from.Unclaimed {
		for _, s := range snaps[o.Vertex] {
			held := s.position != nil && isHead(o, from) // a source's positions
			for _, blob := range s.operators[o.ID] {
				held = held || len(blob) > 0
			}
			if held {
				return fmt.Errorf("the checkpoint holds state of operator %q (uid %q), which this job has no operator with that uid for: give the operator that should take it that uid (weir.UID), or restore with --allow-non-restored-state to drop it", o.Name, o.UID)
			}
		}
	}
	return nil
}

// isHead reports whether o was the first operator of its task (a source
// is; its positions are its state).
func isHead(o OldNode, from Origin) bool {
	for _, n := range append(slices.Collect(maps.Values(from.Nodes)), from.Unclaimed...) {
		if n.Vertex == o.Vertex && n.ID < o.ID {
			return false
		}
	}
	return true
}

// rescalePositions returns the positions of source v's newN subtasks
// from the snapshots of the checkpoint's task with its source.
func rescalePositions(v *plan.Vertex, snaps []*subtaskSnapshot, newN int) ([][]byte, error) {
	head := v.Head()
	old := make([][]byte, len(snaps))
	for i, s := range snaps {
		old[i] = s.position
	}
	if len(old) == newN {
		return old, nil
	}
	r, ok := head.Impl.(PositionRescaler)
	if !ok {
		return nil, fmt.Errorf("source %q cannot move its positions to another parallelism: restore it with parallelism %d", head.Name, len(old))
	}
	pos, err := r.RescalePositions(old, newN)
	if err != nil {
		return nil, fmt.Errorf("source %q: moving its positions from parallelism %d to %d: %w; restore it with parallelism %d", head.Name, len(old), newN, err, len(old))
	}
	if len(pos) != newN {
		return nil, fmt.Errorf("source %q: moving its positions from parallelism %d to %d gave %d positions", head.Name, len(old), newN, len(pos))
	}
	return pos, nil
}

// rescaleOperator returns, per new subtask of node n (of vertex v), the
// old subtasks of o's task whose state of o it restores.
func rescaleOperator(maxPar int, v *plan.Vertex, n *plan.Node, o OldNode, snaps []*subtaskSnapshot, newN int) ([][]int, error) {
	oldN := len(snaps)
	per := make([][]int, newN)
	held := false
	for _, s := range snaps {
		for _, blob := range s.operators[o.ID] {
			held = held || len(blob) > 0
		}
	}
	if !held {
		return per, nil
	}
	how := NotRedistributable
	if r, ok := n.Impl.(Redistributable); ok {
		how = r.Redistribution()
	}
	for j := range newN {
		if per[j] = dealt(how, maxPar, oldN, newN, j); per[j] == nil {
			return nil, fmt.Errorf("operator %q holds state that cannot move to another parallelism: restore task %q with parallelism %d", n.Name, v.Name(), oldN)
		}
	}
	return per, nil
}

// dealt returns the old subtasks, of oldN, whose state of an operator
// that moves as how says new subtask j of newN takes: its own index when
// the parallelism is the same, else by how; nil if the state cannot
// move.
func dealt(how Redistribution, maxPar, oldN, newN, j int) []int {
	if oldN == newN {
		return []int{j}
	}
	var out []int
	switch how {
	case ByKeyGroup:
		start, end := KeyGroupRange(maxPar, newN, j)
		for i := range oldN {
			if s, e := KeyGroupRange(maxPar, oldN, i); s < end && start < e {
				out = append(out, i)
			}
		}
		if out == nil {
			out = []int{} // none overlaps: nothing to take, but no refusal
		}
	case Reassigned:
		out = []int{}
		for i := j; i < oldN; i += newN {
			out = append(out, i)
		}
	case Union:
		out = make([]int, oldN)
		for i := range out {
			out[i] = i
		}
	}
	return out
}

// watermarkTakes returns the old subtasks, of oldN, whose watermarks new
// subtask j of v takes over: its own index at an unchanged parallelism;
// those whose key groups overlap its own when v keeps keyed state (its
// records are of its key groups, so nothing on time for the old subtasks
// that held them is late then); all of them otherwise.
func watermarkTakes(v *plan.Vertex, maxPar, oldN, j int) []int {
	if oldN == v.Parallelism {
		return []int{j}
	}
	for _, n := range v.Chain {
		if r, ok := n.Impl.(Redistributable); ok && r.Redistribution() == ByKeyGroup {
			return dealt(ByKeyGroup, maxPar, oldN, v.Parallelism, j)
		}
	}
	takes := make([]int, oldN)
	for i := range takes {
		takes[i] = i
	}
	return takes
}

// Needed returns the subtasks of the checkpoint laid out as from says
// whose snapshots Rescale reads to restore the subtasks of p that want
// accepts: a restore of some subtasks reads no others. A source's
// positions and a task's operators that no node claims need all of
// their task's.
func Needed(p *plan.Plan, from Origin, want func(dataflow.SubtaskID) bool) map[dataflow.SubtaskID]bool {
	need := map[dataflow.SubtaskID]bool{}
	all := func(vertex int) {
		for i := range from.Parallelism[vertex] {
			need[dataflow.SubtaskID{Vertex: vertex, Subtask: i}] = true
		}
	}
	for _, o := range from.Unclaimed {
		all(o.Vertex)
	}
	for _, v := range p.Vertices {
		for j := range v.Parallelism {
			if !want(dataflow.SubtaskID{Vertex: v.ID, Subtask: j}) {
				continue
			}
			if head, ok := from.Nodes[v.Head().ID]; ok {
				if v.Head().Kind == plan.Source {
					all(head.Vertex)
				}
				for _, i := range watermarkTakes(v, p.MaxParallelism, from.Parallelism[head.Vertex], j) {
					need[dataflow.SubtaskID{Vertex: head.Vertex, Subtask: i}] = true
				}
			}
			for _, n := range v.Chain {
				o, ok := from.Nodes[n.ID]
				if !ok {
					continue
				}
				how := NotRedistributable
				if r, ok := n.Impl.(Redistributable); ok {
					how = r.Redistribution()
				}
				takes := dealt(how, p.MaxParallelism, from.Parallelism[o.Vertex], v.Parallelism, j)
				if takes == nil {
					all(o.Vertex) // refused by Rescale if it holds state
				}
				for _, i := range takes {
					need[dataflow.SubtaskID{Vertex: o.Vertex, Subtask: i}] = true
				}
			}
		}
	}
	return need
}

// rescaleWatermarks returns the watermark section of a new subtask with
// channels input channels that takes over the old subtasks takes: their
// lowest input and output watermarks, with every channel active at that
// input watermark, so that nothing that was on time for all of them is
// late now. It returns nil if none of them stored watermarks.
//
// Which old subtasks a new one takes over the watermarks of is
// watermarkTakes's choice.
func rescaleWatermarks(snaps []*subtaskSnapshot, takes []int, channels int) ([]byte, error) {
	found := false
	in, out := int64(dataflow.MaxWatermark), int64(dataflow.MaxWatermark)
	for _, i := range takes {
		data := snaps[i].wms
		if data == nil {
			continue
		}
		wIn, n := binary.Varint(data)
		if n <= 0 {
			return nil, fmt.Errorf("restoring watermarks: %w", codec.ErrCorrupt)
		}
		wOut, m := binary.Varint(data[n:])
		if m <= 0 {
			return nil, fmt.Errorf("restoring watermarks: %w", codec.ErrCorrupt)
		}
		found, in, out = true, min(in, wIn), min(out, wOut)
	}
	if !found {
		return nil, nil
	}
	w := &input.Watermarks{Input: in, Channels: make([]input.ChannelMark, channels)}
	for c := range w.Channels {
		w.Channels[c] = input.ChannelMark{Watermark: in, State: input.ChanActive}
	}
	return appendWatermarks(nil, w, out), nil
}
