package task

import (
	"context"
	"fmt"
	"slices"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/standbylog"
)

// This file is the control inbox: the messages the job sends a subtask
// (trigger a checkpoint, its completion or abort, the release of a
// finished subtask, a replay request, a question about what it waits
// on), how the runtime delivers them (send, broadcast; across processes
// through remote.go), and how a subtask acts on them between elements
// (pollControl, handleControl). An active standby acts only on
// completions and replay requests (and answers what it waits on): its
// primary's input log holds the other decisions.

// control is a message from the job to a subtask.
type control struct {
	kind       controlKind
	checkpoint int64
	// how says how a triggered checkpoint (ctlTrigger) starts at a
	// source: aligned, drained (TriggerOptions).
	how TriggerOptions
	// A replay request (ctlReplay): send edge's channel to subtask to its
	// retained output from record from on, for the incarnation asking.
	edge, to    int
	from        int64
	incarnation int64
	// reply receives the subtask's description of what it waits on
	// (ctlReport, waits.go).
	reply chan<- string
	// done is closed once the subtask handled a ctlSync.
	done chan<- struct{}
}

type controlKind int

const (
	ctlTrigger controlKind = iota // take checkpoint (sources, finished subtasks)
	ctlComplete
	ctlAbort
	ctlRelease // a finished subtask may exit
	ctlReplay  // replay retained output to a restarted receiver
	ctlReport  // describe what the subtask waits on
	ctlSync    // answer on done: every earlier message is handled
)

// handleControl acts on a message from the job.
func (s *subtask) handleControl(c control) {
	if c.kind == ctlReport {
		s.answerReport(c.reply)
		return
	}
	if c.kind == ctlSync {
		close(c.done)
		return
	}
	if s.role.standby() {
		// A standby follows its primary's decisions, which its log holds;
		// it only trims the output it retains.
		if c.kind == ctlComplete {
			s.trimBackup(c.checkpoint)
			if s.role.kind == remoteStandby {
				s.rt.logs[s.v.ID][s.index].Trim(c.checkpoint)
			}
		}
		if c.kind == ctlReplay && s.role.kind == remoteStandby {
			// For after a promotion: the request reached it first.
			s.replays = append(s.replays, c)
		}
		return
	}
	switch c.kind {
	case ctlTrigger:
		if s.source != nil && s.catchingUp() {
			if c.checkpoint > s.deferred {
				s.deferred, s.deferredHow = c.checkpoint, c.how
			}
			return
		}
		// A source injects the barrier; a finished subtask snapshots
		// its final state.
		if s.in != nil {
			s.noteCatchingUp()
			s.act(-1, exchange.Element{}, s.in.Trigger(c.checkpoint))
		} else if c.checkpoint > s.lastCheckpoint {
			s.takeSnapshot(c.checkpoint, c.how)
		}
	case ctlComplete:
		if err := s.inject(PointCompleteBeforeCommit, c.checkpoint); err != nil {
			Fail(err)
		}
		s.trimBackup(c.checkpoint)
		if s.det != nil {
			s.det.Trim(c.checkpoint)
		}
		if s.log != nil {
			s.log.Trim(c.checkpoint)
		}
		for i, op := range s.ops {
			if l, ok := op.(CheckpointListener); ok {
				if err := l.CheckpointComplete(c.checkpoint); err != nil {
					Fail(fmt.Errorf("%q committing checkpoint %d: %w", s.v.Chain[i].Name, c.checkpoint, err))
				}
			}
		}
	case ctlAbort:
		if s.log != nil {
			// Whether or not it aligns that checkpoint now: its standby
			// must ignore the same barriers later (abortCheckpoint).
			s.log.Append(standbylog.Entry{Kind: standbylog.Abort, Checkpoint: c.checkpoint})
		}
		s.abortCheckpoint(c.checkpoint)
		for _, op := range s.ops {
			if l, ok := op.(CheckpointListener); ok {
				l.CheckpointAborted(c.checkpoint)
			}
		}
	case ctlRelease:
		s.released = true
	case ctlReplay:
		s.replay(c)
	}
}

// abortCheckpoint gives up checkpoint id, which the job aborted: its
// alignment and the barriers of it still to come (the protocol's), and a
// barrier a restarted source deferred.
func (s *subtask) abortCheckpoint(id int64) {
	if s.in != nil {
		s.act(-1, exchange.Element{}, s.in.Abort(id))
	}
	if s.deferred == id {
		s.deferred = 0
	}
}

// pollControl handles the pending control messages without blocking.
func (s *subtask) pollControl() {
	for {
		select {
		case c := <-s.inbox:
			s.handleControl(c)
		default:
			return
		}
	}
}

// send delivers a control message to a subtask without blocking the
// caller for long; inboxes are large and drained on every step.
func (r *Runtime) send(id dataflow.SubtaskID, c control) {
	if !r.IsLocal(id) {
		r.sendRemote(id, c)
		return
	}
	if r.Retired(id) {
		return // its successor's runtime takes the job's messages
	}
	select {
	case r.inboxes[id.Vertex][id.Subtask] <- c:
	default:
		r.kill(fmt.Errorf("control inbox of subtask %s overflowed", id))
	}
}

// TriggerOptions say how a checkpoint starts at the sources
// (Runtime.Trigger). The zero value is a checkpoint of the job's mode.
type TriggerOptions struct {
	// Aligned says the checkpoint must be aligned even if the job's
	// checkpoints are unaligned or switch at an aligned timeout (a
	// savepoint's, which must hold no in-flight records): sources send
	// its barrier in order, marked MustAlign, and every subtask aligns on
	// it.
	Aligned bool
	// Drain says the sources advance their watermark to the final one
	// (dataflow.MaxWatermark) right before the barrier, so every
	// event-time window and timer fires before the snapshot and its
	// output is part of the checkpoint (a savepoint that drains the job
	// before it stops). A source emits no lower watermark afterwards.
	// It is meant with Aligned: the job ends at such a checkpoint.
	Drain bool
}

// Trigger starts checkpoint id: sources inject its barrier and finished
// subtasks snapshot their final state, as how says (TriggerOptions).
func (r *Runtime) Trigger(id int64, how TriggerOptions) {
	r.mu.Lock()
	fin := make(map[dataflow.SubtaskID]bool, len(r.finished))
	for k := range r.finished {
		fin[k] = true
	}
	r.mu.Unlock()
	for _, v := range r.plan.Vertices {
		for i := range v.Parallelism {
			sid := dataflow.SubtaskID{Vertex: v.ID, Subtask: i}
			if !r.IsLocal(sid) {
				continue
			}
			if v.Head().Kind == plan.Source || fin[sid] {
				r.send(sid, control{kind: ctlTrigger, checkpoint: id, how: how})
			}
		}
	}
}

// AwaitCompleted returns once every local subtask with a sink has
// handled the completion of checkpoint id, which Complete(id) announced
// before: its sinks committed that checkpoint's transactions. A subtask
// that exited counts as done. It returns ctx.Err() if ctx ends first.
// The job calls it before it stops after a savepoint.
func (r *Runtime) AwaitCompleted(ctx context.Context, id int64) error {
	type wait struct {
		done   chan struct{}
		exited <-chan struct{}
	}
	var waits []wait
	for _, v := range r.plan.Vertices {
		if !slices.ContainsFunc(v.Chain, func(n *plan.Node) bool { return n.Kind == plan.Sink }) {
			continue
		}
		for i := range v.Parallelism {
			sid := dataflow.SubtaskID{Vertex: v.ID, Subtask: i}
			if !r.IsLocal(sid) {
				continue
			}
			r.mu.Lock()
			exited := r.exited[sid]
			r.mu.Unlock()
			w := wait{done: make(chan struct{}), exited: exited}
			r.send(sid, control{kind: ctlSync, checkpoint: id, done: w.done})
			waits = append(waits, w)
		}
	}
	for _, w := range waits {
		select {
		case <-w.done:
		case <-w.exited:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// TriggerSubtask asks one subtask to take checkpoint id directly; the job
// uses it for subtasks that finished before the barrier reached them.
func (r *Runtime) TriggerSubtask(sid dataflow.SubtaskID, id int64) {
	r.send(sid, control{kind: ctlTrigger, checkpoint: id})
}

// Complete tells every subtask that checkpoint id completed.
func (r *Runtime) Complete(id int64) {
	c := control{kind: ctlComplete, checkpoint: id}
	r.broadcast(c)
	r.toStandbys(c)
}

// toStandbys passes c to the active standbys that read an inbox of their
// own (those in the runtime of their primaries): a completion trims the
// output they retain. A full inbox skips it; the next completion trims as
// far.
func (r *Runtime) toStandbys(c control) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range r.standbys {
		if st.inbox == nil {
			continue
		}
		select {
		case st.inbox <- c:
		default:
		}
	}
}

// Abort tells every subtask that checkpoint id was aborted.
func (r *Runtime) Abort(id int64) { r.broadcast(control{kind: ctlAbort, checkpoint: id}) }

// Release lets finished subtasks exit.
func (r *Runtime) Release() { r.broadcast(control{kind: ctlRelease}) }

func (r *Runtime) broadcast(c control) {
	for _, v := range r.plan.Vertices {
		for i := range v.Parallelism {
			if r.IsLocal(dataflow.SubtaskID{Vertex: v.ID, Subtask: i}) {
				r.send(dataflow.SubtaskID{Vertex: v.ID, Subtask: i}, c)
			}
		}
	}
}
