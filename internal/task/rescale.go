package task

import (
	"encoding/binary"
	"fmt"

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

// Rescale returns the snapshots that restore the subtasks of p from a
// checkpoint its tasks took at the parallelism was (vertex ID to number
// of subtasks); old holds the checkpoint's snapshots by subtask.
//
// A rescaled restore restores the whole job and starts every channel
// afresh: the snapshots it returns hold operator state, source positions
// and watermarks (see rescaleWatermarks), no record counts or control
// counts of the old channels, and no state of sources' watermark
// generators. It fails, naming the task or operator, when a vertex is
// missing from was, when a snapshot holds in-flight records (an unaligned
// checkpoint: those belong to channels that no longer exist), when an
// operator's state is NotRedistributable, or when a source cannot move
// its positions. A vertex whose parallelism did not change keeps its
// subtasks' state and positions as they were.
func Rescale(p *plan.Plan, was map[int]int, old map[dataflow.SubtaskID][]byte) (map[dataflow.SubtaskID][]byte, error) {
	out := map[dataflow.SubtaskID][]byte{}
	for _, v := range p.Vertices {
		oldN, newN := was[v.ID], v.Parallelism
		if oldN < 1 {
			return nil, fmt.Errorf("task %q is not in the checkpoint", v.Name())
		}
		snaps := make([]*subtaskSnapshot, oldN)
		for i := range snaps {
			snap, err := decodeSubtaskSnapshot(old[dataflow.SubtaskID{Vertex: v.ID, Subtask: i}])
			if err != nil {
				return nil, fmt.Errorf("task %q, subtask %d: %w", v.Name(), i, err)
			}
			if len(snap.inputs) > 0 || len(snap.outputs) > 0 {
				return nil, fmt.Errorf("task %q holds records in flight in the checkpoint (an unaligned checkpoint), which belong to channels of parallelism %d: restore it at the parallelism it was taken with, or restore at another parallelism from a checkpoint without records in flight (taken without --unaligned)",
					v.Name(), oldN)
			}
			snaps[i] = snap
		}
		positions, err := rescalePositions(v, snaps, newN)
		if err != nil {
			return nil, err
		}
		from, err := rescaleOperators(p.MaxParallelism, v, snaps, newN)
		if err != nil {
			return nil, err
		}
		channels := 0
		for _, e := range v.Inputs {
			channels += e.Channels()
		}
		for j := range newN {
			var data []byte
			if positions != nil && positions[j] != nil {
				data = appendSection(data, sectionPosition, 0, positions[j])
			}
			takes := []int{j}
			if oldN != newN {
				takes = nil
				for i := range oldN {
					takes = append(takes, i)
				}
			}
			if wms, err := rescaleWatermarks(snaps, takes, channels); err != nil {
				return nil, fmt.Errorf("task %q: %w", v.Name(), err)
			} else if wms != nil {
				data = appendSection(data, sectionWatermarks, 0, wms)
			}
			for _, n := range v.Chain {
				if from[n.ID] == nil {
					continue // no state
				}
				for _, i := range from[n.ID][j] {
					for _, blob := range snaps[i].operators[n.ID] {
						data = appendSection(data, sectionOperator, n.ID, blob)
					}
				}
			}
			out[dataflow.SubtaskID{Vertex: v.ID, Subtask: j}] = data
		}
	}
	return out, nil
}

// rescalePositions returns the positions of v's newN subtasks, or nil if
// v is no source.
func rescalePositions(v *plan.Vertex, snaps []*subtaskSnapshot, newN int) ([][]byte, error) {
	head := v.Head()
	if head.Kind != plan.Source {
		return nil, nil
	}
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

// rescaleOperators returns, per node of v's chain and new subtask, the
// old subtasks whose state the new subtask restores.
func rescaleOperators(maxPar int, v *plan.Vertex, snaps []*subtaskSnapshot, newN int) (map[int][][]int, error) {
	oldN := len(snaps)
	from := map[int][][]int{}
	for _, n := range v.Chain {
		held := false
		for _, s := range snaps {
			for _, blob := range s.operators[n.ID] {
				held = held || len(blob) > 0
			}
		}
		if !held {
			continue
		}
		const unchanged Redistribution = -1
		how := NotRedistributable
		if r, ok := n.Impl.(Redistributable); ok {
			how = r.Redistribution()
		}
		if oldN == newN {
			how = unchanged
		}
		per := make([][]int, newN)
		for j := range newN {
			switch how {
			case unchanged:
				per[j] = []int{j}
			case ByKeyGroup:
				start, end := KeyGroupRange(maxPar, newN, j)
				for i := range oldN {
					if s, e := KeyGroupRange(maxPar, oldN, i); s < end && start < e {
						per[j] = append(per[j], i)
					}
				}
			case Reassigned:
				for i := j; i < oldN; i += newN {
					per[j] = append(per[j], i)
				}
			default:
				return nil, fmt.Errorf("operator %q holds state that cannot move to another parallelism: restore task %q with parallelism %d", n.Name, v.Name(), oldN)
			}
		}
		from[n.ID] = per
	}
	return from, nil
}

// rescaleWatermarks returns the watermark section of a new subtask with
// channels input channels that takes over the old subtasks takes: their
// lowest input and output watermarks, with every channel active at that
// input watermark, so that nothing that was on time for all of them is
// late now. It returns nil if none of them stored watermarks.
//
// A new subtask of a task whose parallelism changed takes over the
// watermarks of all its old subtasks (its records come from all of
// them); one of a task whose parallelism did not, its own.
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
