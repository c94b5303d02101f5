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
	old     map[int]int          // the cone's vertices' parallelism before
	needed  map[handOverKey]bool // the old subtasks' operators whose state the local subtasks take
	mu      sync.Mutex
	got     map[dataflow.SubtaskID]*handedOver
	changed chan struct{} // closed and replaced at each hand-over
}

// ExpectHandOver makes a successor runtime's subtasks take their state
// from the retired subtasks of the running plan old in memory (see
// CanHandOver) rather than from SetRestore's snapshots: they start with
// Run, at once, and wait for the hand-over of the old subtasks whose
// state they take, which must all run in this process. It must come
// before the running runtimes' PrepareReshape (or PrepareReshapeTo).
func (r *Runtime) ExpectHandOver(old *plan.Plan) {
	h := &handovers{old: map[int]int{}, needed: map[handOverKey]bool{}, got: map[dataflow.SubtaskID]*handedOver{}, changed: make(chan struct{})}
	for _, v := range r.plan.Vertices {
		for j := range v.Parallelism {
			if !r.IsLocal(dataflow.SubtaskID{Vertex: v.ID, Subtask: j}) {
				continue
			}
			oldN := old.Vertices[v.ID].Parallelism
			h.old[v.ID] = oldN
			for i, deal := range handOverDeals(v, r.plan.MaxParallelism, oldN, j) {
				node := -1 // the watermarks
				if i > 0 {
					node = v.Chain[i-1].ID
				}
				for _, from := range deal {
					h.needed[handOverKey{dataflow.SubtaskID{Vertex: v.ID, Subtask: from}, node}] = true
				}
			}
		}
	}
	r.handovers = h
}

// ExpectsHandOver reports whether the runtime takes its state in memory
// (ExpectHandOver).
func (r *Runtime) ExpectsHandOver() bool { return r.handovers != nil }

// handOverKey names what a successor takes of an old subtask: the state
// of one of its operators (by node ID), or its watermarks (node -1).
type handOverKey struct {
	old  dataflow.SubtaskID
	node int
}

// handOverDeals returns the old subtasks, of oldN, whose state new
// subtask j of v takes: first those whose watermarks it takes, then per
// node of its chain those whose state of the node it takes (nil for a
// node that holds no state that moves: not an Adopter's).
func handOverDeals(v *plan.Vertex, maxPar, oldN, j int) [][]int {
	out := [][]int{watermarkTakes(v, maxPar, oldN, j)}
	for _, n := range v.Chain {
		var deal []int
		if r, ok := n.Impl.(Redistributable); ok {
			if _, ok := n.Impl.(HandOverNode); ok {
				deal = dealt(r.Redistribution(), maxPar, oldN, v.Parallelism, j)
			}
		}
		out = append(out, deal)
	}
	return out
}

// TakesFrom returns the old subtasks, of oldN, that new subtask j of v
// takes state of (watermarks or an operator's) at a hand-over.
func TakesFrom(v *plan.Vertex, maxPar, oldN, j int) []int {
	return union(handOverDeals(v, maxPar, oldN, j))
}

// union returns the indices in deals, each once, in the order they first
// come.
func union(deals [][]int) []int {
	seen := map[int]bool{}
	var out []int
	for _, deal := range deals {
		for _, i := range deal {
			if !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	return out
}

// wants reports whether a subtask of this runtime takes old subtask id's
// state of node (-1: its watermarks).
func (h *handovers) wants(id dataflow.SubtaskID, node int) bool {
	return h.needed[handOverKey{id, node}]
}

// put records subtask id's hand-over.
func (h *handovers) put(id dataflow.SubtaskID, ho *handedOver) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got[id] = ho
	close(h.changed)
	h.changed = make(chan struct{})
}

// waitHandOver returns the hand-overs of the old subtasks of its task
// (by index; nil for those not in from), once those from names handed
// over.
func (s *subtask) waitHandOver(from []int) ([]*handedOver, error) {
	h := s.rt.handovers
	for {
		h.mu.Lock()
		out := make([]*handedOver, h.old[s.v.ID])
		missing := false
		for _, i := range from {
			out[i] = h.got[dataflow.SubtaskID{Vertex: s.v.ID, Subtask: i}]
			missing = missing || out[i] == nil
		}
		changed := h.changed
		h.mu.Unlock()
		if !missing {
			return out, nil
		}
		select {
		case <-changed:
		case <-s.ctx.Done():
			return nil, s.ctx.Err()
		}
	}
}

// handOver leaves a retiring subtask's operators and watermark state to
// the successor that expects them, if it does; the subtask then calls
// its stateful operators no more (close skips them): they are the new
// subtasks' now.
func (s *subtask) handOver() {
	rs := s.rt.reshape.Load()
	id := dataflow.SubtaskID{Vertex: s.v.ID, Subtask: s.index}
	if rs == nil || rs.to == nil || !rs.to.handovers.wants(id, -1) {
		return // none of this process's successors takes over this subtask's task
	}
	ho := &handedOver{ops: map[int]Operator{}, wms: s.handoverWMs}
	for i, op := range s.ops {
		n := s.v.Chain[i].ID
		if _, ok := op.(Adopter); ok && rs.to.handovers.wants(id, n) {
			ho.ops[n] = op
			s.ops[i] = nil
		}
	}
	rs.to.handovers.put(id, ho)
}

// adoptState restores a successor's subtask from the hand-over of the
// retired subtasks of its task: its watermark state from those
// watermarkTakes names, each operator's state from those
// Redistributable deals to it.
func (s *subtask) adoptState() error {
	oldN := s.rt.handovers.old[s.v.ID]
	all := handOverDeals(s.v, s.rt.plan.MaxParallelism, oldN, s.index)
	takes, deals := all[0], all[1:]
	olds, err := s.waitHandOver(union(all))
	if err != nil {
		return err
	}
	s.restored = true
	if err := s.inject(PointRecovery, 0); err != nil {
		return err
	}
	snaps := make([]*subtaskSnapshot, oldN)
	for _, i := range takes {
		snaps[i] = &subtaskSnapshot{wms: olds[i].wms}
	}
	section, err := rescaleWatermarks(snaps, takes, s.v.InputChannels())
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
		a := Adoption{Subtask: s.index, From: deals[i]}
		for _, k := range deals[i] {
			o := olds[k].ops[n.ID]
			if o == nil {
				return fmt.Errorf("restoring %q: subtask %d retired without handing its state over", n.Name, k)
			}
			a.Old = append(a.Old, o)
		}
		if err := ad.Adopt(a); err != nil {
			return fmt.Errorf("restoring %q from the retired subtasks %v: %w", n.Name, deals[i], err)
		}
	}
	return nil
}
