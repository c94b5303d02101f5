package task

import (
	"fmt"
	"sync"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/input"
	"github.com/weir-stream/weir/internal/plan"
)

// This file is the hand-over in memory of a live rescale in one process:
// the cone's new subtasks take the operators' state from the retired
// subtasks' operators themselves, as they were at the rescale's barrier,
// and start at once, instead of waiting for the checkpoint to be written,
// to complete and to be read back. The checkpoint still holds that
// state, for a restart should the job fail; the new subtasks' output goes
// into the transactions of the checkpoints after it, so that until it
// completes, nothing they wrote is visible.

// Adoption is what a new subtask's operator takes over at a hand-over:
// the operators of its node in the retired subtasks whose state it
// restores (as Redistributable says; its own index at an unchanged
// parallelism), all of its own concrete type.
type Adoption struct {
	// Subtask is the new subtask's index.
	Subtask int
	// Old are the retired subtasks' operators, From their indices.
	Old  []Operator
	From []int
}

// Adopter is an optional ability of a Snapshotter whose node is a
// HandOverNode: the operator takes over the state of the retired
// operators in a, before Open, in place of restoring their snapshot. The
// retired operators are not called again; their last snapshot may still
// be encoding, so the adopter must not change what it reads (state
// backends copy on write, state.Backend.Adopt).
type Adopter interface {
	Adopt(a Adoption) error
}

// HandOverNode is an optional ability of a NodeImpl: its operators are
// Adopters, so its state can pass in memory at a live rescale when the
// job keeps its state in memory.
type HandOverNode interface {
	HandsOver()
}

// CanHandOver reports whether the state of the cone's vertices of p can
// pass in memory at a live rescale in a runtime with options o: the
// state lives in memory (no LSM store) and every node that holds state
// that moves (Redistributable) can hand it over.
func CanHandOver(o Options, p *plan.Plan, cone map[int]bool) bool {
	if o.State != nil {
		return false
	}
	for _, v := range p.Vertices {
		if !cone[v.ID] {
			continue
		}
		for _, n := range v.Chain {
			if _, stateful := n.Impl.(Redistributable); !stateful {
				continue
			}
			if _, ok := n.Impl.(HandOverNode); !ok {
				return false
			}
		}
	}
	return true
}

// handedOver is what a retired subtask left for its successors.
type handedOver struct {
	ops map[int]Operator // by node ID
	wms []byte           // its watermark section at the barrier
}

// handovers collects the retired subtasks' hand-overs for a successor
// runtime.
type handovers struct {
	old   map[int]int // the cone's vertices' parallelism before
	mu    sync.Mutex
	got   map[dataflow.SubtaskID]*handedOver
	ready map[int]chan struct{} // per vertex, closed once all its old subtasks handed over
}

// ExpectHandOver makes a successor runtime's subtasks take their state
// from the retired subtasks of the running plan old in memory (see
// CanHandOver) rather than from SetRestore's snapshots: they start with
// Run, at once, and wait for the hand-over of the old subtasks of their
// task. It must come before PrepareReshape hands the successor to the
// running runtimes.
func (r *Runtime) ExpectHandOver(old *plan.Plan) {
	h := &handovers{old: map[int]int{}, got: map[dataflow.SubtaskID]*handedOver{}, ready: map[int]chan struct{}{}}
	for _, v := range r.plan.Vertices {
		if r.IsLocal(dataflow.SubtaskID{Vertex: v.ID}) {
			h.old[v.ID] = old.Vertices[v.ID].Parallelism
			h.ready[v.ID] = make(chan struct{})
		}
	}
	r.handovers = h
}

// put records subtask id's hand-over.
func (h *handovers) put(id dataflow.SubtaskID, ho *handedOver) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got[id] = ho
	for i := range h.old[id.Vertex] {
		if h.got[dataflow.SubtaskID{Vertex: id.Vertex, Subtask: i}] == nil {
			return
		}
	}
	close(h.ready[id.Vertex])
}

// wait returns the hand-overs of vertex v's old subtasks, by index, once
// all of them handed over.
func (s *subtask) waitHandOver() ([]*handedOver, error) {
	h := s.rt.handovers
	select {
	case <-h.ready[s.v.ID]:
	case <-s.ctx.Done():
		return nil, s.ctx.Err()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*handedOver, h.old[s.v.ID])
	for i := range out {
		out[i] = h.got[dataflow.SubtaskID{Vertex: s.v.ID, Subtask: i}]
	}
	return out, nil
}

// handOver leaves a retiring subtask's operators and watermark state to
// the successor that expects them, if it does; the subtask then calls
// its stateful operators no more (close skips them): they are the new
// subtasks' now.
func (s *subtask) handOver() {
	rs := s.rt.reshape.Load()
	if rs == nil || rs.next.handovers == nil {
		return
	}
	ho := &handedOver{ops: map[int]Operator{}, wms: s.handoverWMs}
	for i, op := range s.ops {
		if _, ok := op.(Adopter); ok {
			ho.ops[s.v.Chain[i].ID] = op
			s.ops[i] = nil
		}
	}
	rs.next.handovers.put(dataflow.SubtaskID{Vertex: s.v.ID, Subtask: s.index}, ho)
}

// adoptState restores a successor's subtask from the hand-over of the
// retired subtasks of its task: its watermark state from those
// watermarkTakes names, each operator's state from those
// Redistributable deals to it.
func (s *subtask) adoptState() error {
	olds, err := s.waitHandOver()
	if err != nil {
		return err
	}
	s.restored = true
	if err := s.inject(PointRecovery, 0); err != nil {
		return err
	}
	newN, oldN := s.v.Parallelism, len(olds)
	snaps := make([]*subtaskSnapshot, oldN)
	for i, o := range olds {
		snaps[i] = &subtaskSnapshot{wms: o.wms}
	}
	takes := watermarkTakes(s.v, s.rt.plan.MaxParallelism, oldN, s.index)
	channels := 0
	for _, e := range s.v.Inputs {
		channels += e.Channels()
	}
	section, err := rescaleWatermarks(snaps, takes, channels)
	if err != nil {
		return err
	}
	st := input.State{Counts: make([]int64, len(s.decode))}
	if section != nil {
		if st.Watermarks, err = s.restoreWatermarks(section); err != nil {
			return err
		}
	}
	if s.in != nil {
		if err := s.in.Restore(st); err != nil {
			return err
		}
	}
	for i, op := range s.ops {
		n := s.v.Chain[i]
		ad, ok := op.(Adopter)
		if !ok {
			continue
		}
		how := NotRedistributable
		if r, ok := n.Impl.(Redistributable); ok {
			how = r.Redistribution()
		}
		from := dealt(how, s.rt.plan.MaxParallelism, oldN, newN, s.index)
		if from == nil {
			return fmt.Errorf("operator %q holds state that cannot move to another parallelism", n.Name)
		}
		a := Adoption{Subtask: s.index, From: from}
		for _, i := range from {
			o := olds[i].ops[n.ID]
			if o == nil {
				return fmt.Errorf("restoring %q: subtask %d retired without handing its state over", n.Name, i)
			}
			a.Old = append(a.Old, o)
		}
		if err := ad.Adopt(a); err != nil {
			return fmt.Errorf("restoring %q from the retired subtasks %v: %w", n.Name, from, err)
		}
	}
	return nil
}
