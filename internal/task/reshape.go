package task

import (
	"fmt"
	"slices"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/plan"
)

// This file is a live rescale inside a running attempt: some tasks change
// parallelism at one aligned checkpoint while the rest of the job runs
// on. The tasks that change and every task downstream of them (the cone)
// are replaced at that checkpoint's barrier: their subtasks here take the
// snapshot, send the barrier on and retire, reading nothing after it;
// subtasks outside the cone that send into it send their records after
// the barrier to the gates of the cone's new subtasks, which run in
// another Runtime (the successor) at the new parallelism and start from
// the checkpoint once it completed. Nothing the cone consumed after the
// barrier has to be taken back, and nothing sent after it is lost: it
// waits in the successor's gates.

// reshape is a live rescale under way (PrepareReshape).
type reshape struct {
	at   int64        // the checkpoint at whose barrier the cone is replaced
	cone map[int]bool // vertex IDs
	next *Runtime     // runs the cone's new subtasks, or sends to them
	// to, if not nil, takes the retiring subtasks' state in memory
	// (handover.go): next itself in one process, a successor share in
	// the same process on a cluster.
	to *Runtime
}

// NewSuccessor returns a runtime that runs subtasks of a live rescale's
// cone of plan p (the job's plan at its new parallelism,
// plan.Plan.WithParallelism): those opts.Local accepts, which must lie in
// the cone. Its gates exist from now on, so that senders outside the
// cone can send into them at the barrier; its subtasks start, from
// SetRestore's snapshots, once Run is called. opts are otherwise the
// attempt's options; at is the checkpoint of the rescale.
func NewSuccessor(p *plan.Plan, opts Options, at int64) *Runtime {
	opts.Restored = at
	opts.Restore = nil
	return New(p, opts)
}

// SetRestore sets the snapshots a successor's subtasks restore; it must
// come before Run.
func (r *Runtime) SetRestore(state map[dataflow.SubtaskID][]byte) { r.opts.Restore = state }

// PrepareReshape makes checkpoint at the point of a live rescale: the
// subtasks of the cone's vertices retire after its snapshot, and those
// that send into the cone send what follows its barrier to next's
// gates. The job calls it before it triggers at, which must be aligned
// (TriggerOptions.Aligned), under the job's global failover: the runtime
// keeps no upstream backup or active standby (they know the old
// channels only). Should at not complete, the attempt must end (some
// senders moved on).
func (r *Runtime) PrepareReshape(at int64, next *Runtime, cone map[int]bool) {
	var to *Runtime
	if next.handovers != nil {
		to = next
	}
	r.PrepareReshapeTo(at, next, to, cone)
}

// PrepareReshapeTo is PrepareReshape where the subtasks that retire leave
// their state to to, a successor in this process that expects it
// (ExpectHandOver; nil: none), while the senders send to the new subtasks
// through next: on a cluster, next only sends to the successor shares,
// one of which may run in this process.
func (r *Runtime) PrepareReshapeTo(at int64, next, to *Runtime, cone map[int]bool) {
	r.reshape.Store(&reshape{at: at, cone: cone, next: next, to: to})
}

// Retired reports whether subtask id retired at a live rescale: its
// successor's runtime runs it now.
func (r *Runtime) Retired(id dataflow.SubtaskID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.retired[id]
}

// reshapeAt carries out the live rescale at checkpoint id, at the end of
// the subtask's snapshot of it (its barrier went out already): a
// subtask of the cone retires; one outside it points each of its
// writers into the cone at the new subtasks' gates and tells them where
// its output stands (its watermark, idleness, or end).
func (s *subtask) reshapeAt(id int64, f *frozen) {
	rs := s.rt.reshape.Load()
	if rs == nil || rs.at != id {
		return
	}
	if rs.cone[s.v.ID] {
		s.retiring, s.handoverWMs = true, f.wms
		return
	}
	for w, e := range s.v.Outputs {
		if !rs.cone[e.Target.ID] {
			continue
		}
		k := slices.Index(e.Target.Inputs, e)
		ne := rs.next.plan.Vertices[e.Target.ID].Inputs[k]
		o := s.outs[w]
		// The old channels end (unless they did, with the subtask's
		// input): the retired receivers wait for that (drainRetired).
		o.reroute(rs.next.chans(ne, s.index), !s.finished)
		chs := make([]dataflow.Channel, o.Channels())
		for j := range chs {
			chs[j] = dataflow.Channel{Edge: s.rt.edgeIndex[e], From: s.index, To: j}
		}
		s.outCh[w] = chs
		switch {
		case s.finished:
			o.Emit(exchange.Element{Kind: exchange.Watermark, Time: dataflow.MaxWatermark})
			o.Emit(exchange.Element{Kind: exchange.End})
		case s.idle:
			o.Emit(exchange.Element{Kind: exchange.Idle})
		case s.outWM > dataflow.MinWatermark:
			o.Emit(exchange.Element{Kind: exchange.Watermark, Time: s.outWM})
		}
	}
}

// drainRetired ends a subtask of the cone after its snapshot: it ends
// its output channels and waits for the end of each of its input
// channels, which its senders end right after the rescale's barrier, so
// that nothing but an end follows the barrier on them. A transport
// closes a connection without failing only once every channel on it
// ended, so the senders and receivers of a share whose subtasks all
// retired see no connection break. Its input is not finished: no final
// watermark, no end of input for its operators.
func (s *subtask) drainRetired() error {
	if !s.finished {
		s.emit(exchange.Element{Kind: exchange.End})
	}
	if s.in == nil {
		return nil
	}
	ended := make([]bool, s.gate.Channels())
	left := len(ended)
	for _, c := range s.in.Status().Ended {
		ended[c] = true
		left--
	}
	for left > 0 {
		ch, e, ok := s.gate.Poll()
		if !ok {
			select {
			case <-s.gate.Ready():
			case <-s.ctx.Done():
				return s.ctx.Err()
			}
			continue
		}
		switch e.Kind {
		case exchange.End:
			if !ended[ch] {
				ended[ch] = true
				left--
			}
		case exchange.Data:
			exchange.PutBuffer(e.Buf)
			return fmt.Errorf("records reached input channel %d after the live rescale's barrier, which retired the subtask: their sender did not move to the new subtasks", ch)
		}
	}
	return nil
}

// retire ends a subtask of the cone after its snapshot: the runtime
// forgets it (no control message goes to it from now on) and its
// goroutine ends without finishing its input.
func (s *subtask) retire() {
	r := s.rt
	r.mu.Lock()
	if r.retired == nil {
		r.retired = map[dataflow.SubtaskID]bool{}
	}
	r.retired[s.id()] = true
	delete(r.finished, s.id())
	r.mu.Unlock()
}
