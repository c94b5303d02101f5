package task

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/standbylog"
)

// This file is the runtime's side of active standby (standby.go).

// initStandby prepares the input log and output cursors of subtask i
// of v, which can have an active standby.
func (r *Runtime) initStandby(v *plan.Vertex, i int) {
	l := standbylog.New(r.opts.RetainLimit)
	l.Mark(r.opts.Restored)
	r.logs[v.ID][i] = l
	r.standbyMetrics[v.ID][i] = NewMetrics()
	if r.opts.StandbyElsewhere || r.opts.PrimaryElsewhere {
		return // the standby's output goes nowhere the primary's does (standby_remote.go)
	}
	cs := make([][]*cursor, len(v.Outputs))
	for w, e := range v.Outputs {
		n := 1
		if e.Partitioning != plan.Forward {
			n = e.Target.Parallelism
		}
		cs[w] = make([]*cursor, n)
		for j := range cs[w] {
			cs[w][j] = &cursor{}
		}
	}
	r.cursors[v.ID][i] = cs
}

// StartStandby starts an active standby of subtask id from checkpoint
// restored, whose state for id is state (nil: empty), following the
// primary's input log from that checkpoint's mark. It fails when the log
// no longer reaches back to it, when id has a standby, or when id is down.
func (r *Runtime) StartStandby(id dataflow.SubtaskID, state []byte, restored int64) error {
	return r.startStandby(id, state, state != nil, restored, true)
}

func (r *Runtime) startStandby(id dataflow.SubtaskID, state []byte, hasState bool, restored int64, counts bool) error {
	l := r.logs[id.Vertex][id.Subtask]
	if l == nil {
		return fmt.Errorf("subtask %s has no active standby", id)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.standbys[id] != nil || r.down[id] || r.ctx == nil || r.ctx.Err() != nil {
		return fmt.Errorf("subtask %s cannot take a standby now", id)
	}
	at, ok := l.StartReading(restored)
	if !ok {
		return fmt.Errorf("the input log of subtask %s does not reach back to checkpoint %d", id, restored)
	}
	ctx, cancel := context.WithCancelCause(r.ctx)
	v := r.plan.Vertices[id.Vertex]
	s := r.makeSubtask(ctx, v, id.Subtask, r.standbyMetrics[id.Vertex][id.Subtask])
	s.gate = exchange.NewGate(r.gates[id.Vertex][id.Subtask].Channels(), 1) // never fed
	var own chan control
	if r.opts.PrimaryElsewhere {
		s.inbox = r.inboxes[id.Vertex][id.Subtask] // no primary reads it here
	} else {
		own = make(chan control, 256)
		s.inbox = own
	}
	s.det, s.log = nil, nil
	s.state, s.hasState = state, hasState
	s.role = standbyRole(r.opts.PrimaryElsewhere, counts)
	s.tctx.Restored = restored
	st := &standby{s: s, cancel: cancel, exited: make(chan struct{}), at: at, inbox: own}
	s.standby = st
	r.standbys[id] = st
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(st.exited)
		err := s.run()
		if s.ctx.Err() != nil && r.ctx.Err() == nil {
			err = context.Cause(s.ctx)
		}
		r.mu.Lock()
		promoted, ready := st.promoted, st.ready
		if !promoted && r.standbys[id] == st {
			delete(r.standbys, id)
		}
		r.mu.Unlock()
		if ready != nil {
			ready() // a promoted standby that stopped before it asked for replays
		}
		if promoted {
			r.exit(id, s, err)
			return
		}
		l.StopReading()
		if errors.Is(err, ErrNotDeterministic) {
			r.once.Do(func() { r.first = err })
			r.cancel(err)
			return
		}
		if err != nil && r.ctx.Err() == nil && err != errStopped {
			r.opts.logf("the active standby of subtask %s stopped: %v", id, err)
			r.opts.Host.StandbyStopped(id, err)
		}
	}()
	return nil
}

// takeover hands subtask id, whose primary failed with err, to its
// standby; false when it has none that can take its place (one that
// cannot is stopped).
func (r *Runtime) takeover(id dataflow.SubtaskID, err error) bool {
	l := r.logs[id.Vertex][id.Subtask]
	if l == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.standbys[id]
	if st == nil || r.closed {
		return false
	}
	delete(r.standbys, id)
	if !l.HandOver() {
		st.cancel(errStopped)
		return false
	}
	st.promoted, st.failure, st.failedAt = true, err, time.Now().UnixNano()
	r.cancels[id.Vertex][id.Subtask] = st.cancel
	r.exited[id] = st.exited
	l.Signal()
	return true
}

// dropStandby stops subtask id's standby, if it has one, and returns a
// channel closed once it stopped.
func (r *Runtime) dropStandby(id dataflow.SubtaskID) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.standbys[id]
	if st == nil {
		return nil
	}
	delete(r.standbys, id)
	st.cancel(errStopped)
	return st.exited
}

// KillStandby fails subtask id's standby with err, as if it had crashed.
func (r *Runtime) KillStandby(id dataflow.SubtaskID, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st := r.standbys[id]; st != nil {
		st.cancel(&Failure{Task: r.plan.Vertices[id.Vertex].Name(), Subtask: id.Subtask, Err: fmt.Errorf("standby: %w", err)})
	}
}

// Standbys returns the subtasks that have a running standby.
func (r *Runtime) Standbys() []dataflow.SubtaskID {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]dataflow.SubtaskID, 0, len(r.standbys))
	for id := range r.standbys {
		out = append(out, id)
	}
	return out
}

// MissingStandbys returns the subtasks that can have an active standby that run without a
// standby (it failed, took over, or its log was dropped).
func (r *Runtime) MissingStandbys() []dataflow.SubtaskID {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []dataflow.SubtaskID
	for _, v := range r.plan.Vertices {
		for i, l := range r.logs[v.ID] {
			id := dataflow.SubtaskID{Vertex: v.ID, Subtask: i}
			if l != nil && r.standbys[id] == nil && !r.down[id] && !r.finished[id] {
				out = append(out, id)
			}
		}
	}
	return out
}

// StandbyRetained returns the bytes of output subtask i of vertex v's
// active standby in this runtime retains for replay after a takeover (0
// without one).
func (r *Runtime) StandbyRetained(v, i int) int64 {
	if m := r.standbyMetrics[v][i]; m != nil {
		return m.Retained.Load()
	}
	return 0
}

// StandbyLag returns how many input elements subtask i of vertex v's
// active standby has yet to apply: what a takeover would apply before
// reading the gate. ok is false when the subtask has no standby.
func (r *Runtime) StandbyLag(v, i int) (lag int64, ok bool) {
	l := r.logs[v][i]
	if l == nil {
		return 0, false
	}
	r.mu.Lock()
	_, ok = r.standbys[dataflow.SubtaskID{Vertex: v, Subtask: i}]
	r.mu.Unlock()
	return l.Lag(), ok
}
