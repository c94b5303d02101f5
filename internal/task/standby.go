package task

import (
	"context"
	"errors"
	"time"

	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/plan"
)

// This file is active standby (Hwang et al.'s process pairs) inside one
// runtime, under Options.ActiveStandby. Every subtask that can regenerate
// its output record for record (CanHaveStandby) has a standby: a second
// instance of its chain that processes the same input in the same order
// and sends the same output, while the receivers keep only the first copy
// of each position. When the primary fails, the standby takes its place;
// nothing restarts and no source rewinds.
//
// The primary logs every element it consumes (standbylog.Log), in its order,
// with its decisions that are not in the input (an aborted alignment, the
// start of a replay). The standby applies that log instead of reading a
// gate, so its state follows the primary's exactly. Both write through
// per-channel cursors (cursor): an element goes to the receiver only if
// it extends what either instance delivered, so receivers see one stream
// that whichever instance is ahead extends. When the primary stops, the
// standby applies the rest of the log, then reads the primary's gate and
// control inbox: the switch.
//
// The log is trimmed when a checkpoint completes, to that checkpoint's
// mark (where the primary took its snapshot), so a new standby can start
// from the latest completed checkpoint's state and the log from its mark.
// It is bounded by Options.RetainLimit: past it the log is dropped, the
// standby stops, and a new one can start once a later checkpoint, whose
// mark the log holds again, completes.

// standby is a running standby of a subtask.
type standby struct {
	s      *subtask
	cancel context.CancelCauseFunc
	exited chan struct{}
	at     int64 // the next log entry to apply
	// inbox is the standby's own control inbox in a runtime that also runs
	// its primary (nil in a runtime of remote standbys, where the standby
	// reads the subtask's): completions reach it there, to trim what it
	// retains.
	inbox    chan control
	promoted bool  // its primary stopped; it takes over (under Runtime.mu)
	failure  error // the primary's failure it takes over from
	failedAt int64 // when, in Unix nanoseconds

	// Set by Promote (Options.PrimaryElsewhere), under Runtime.mu.
	promotion   *Promotion
	incarnation int64
	ready       func()
}

// CanHaveStandby reports whether subtasks of v get an active standby: they
// have outputs, read a gate, and regenerate their output exactly from the
// same input order (ReplayDeterministic). Sources restart alone instead,
// and sinks, whose writes a second instance would repeat, too.
func CanHaveStandby(v *plan.Vertex) bool {
	return len(v.Outputs) > 0 && v.Head().Kind != plan.Source && ReplayDeterministic(v, true)
}

// ErrNotDeterministic fails a job whose task's primary and active standby
// sent different output: the task is not deterministic, so neither a
// takeover nor a restart alone can keep the output exact.
var ErrNotDeterministic = errors.New("the task is not deterministic")

// errStandbyLost stops a standby whose primary's log was dropped.
var errStandbyLost = errors.New("the input log it follows was dropped for its size")

// runStandby drives a standby: it applies its primary's logged input
// until the primary stopped and the log ended, then takes its place and
// reads the primary's gate.
func (s *subtask) runStandby() error {
	st, log := s.standby, s.rt.logs[s.v.ID][s.index]
	for {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		en, ok, gone, lost := log.Next(st.at)
		if lost {
			return errStandbyLost
		}
		if !ok {
			if gone {
				s.takeOver()
				return s.runInputs()
			}
			s.flushAll()
			select {
			case <-log.Ready():
			case c := <-s.inbox:
				s.handleControl(c)
			case <-s.ctx.Done():
				return s.ctx.Err()
			}
			continue
		}
		st.at++
		s.pollControl()
		if done, err := s.applyLogged(en); done || err != nil {
			if err == nil && s.promotedAtEnd() {
				// The subtask waits for its release (subtask.run).
				s.takeOver()
				s.rt.markFinished(s.ctx, s.id())
			}
			return err
		}
	}
}

// promotedAtEnd decides, once a standby applied the end of its primary's
// input, whether it takes the subtask's place: it does when its primary
// failed already (it was promoted, maybe while it applied the end), since
// the subtask must still take the final checkpoint and wait for its
// release. Otherwise it is no standby any more: a later failure of the
// primary is not handed to it, and the subtask restarts instead.
func (s *subtask) promotedAtEnd() bool {
	r, id, st := s.rt, s.id(), s.standby
	r.mu.Lock()
	defer r.mu.Unlock()
	if st.promoted {
		return true
	}
	if r.standbys[id] == st {
		delete(r.standbys, id)
	}
	return false
}

// takeOver makes a standby the subtask: it reads the primary's gate and
// inbox, logs its input and counts into the subtask's metrics from now on.
func (s *subtask) takeOver() {
	r, id := s.rt, s.id()
	st := s.standby
	s.standby, s.role = nil, s.role.takeOver()
	s.gate = r.gates[id.Vertex][id.Subtask]
	if s.role.kind == promoted {
		s.det, s.tctx.Metrics = r.dets[id.Vertex][id.Subtask], r.metrics[id.Vertex][id.Subtask]
		for _, o := range s.outs {
			o.setMetrics(s.tctx.Metrics)
		}
		s.log = r.logs[id.Vertex][id.Subtask]
		s.log.LogOwnInput()
		s.takeOverElsewhere(st)
		return
	}
	// The primary may have stopped between its alignment's end and
	// unblocking its channels: the gate's channels are blocked exactly
	// where the standby, which applied all the primary consumed, waits
	// for barriers (aligned checkpoints only block).
	blocked := make([]bool, len(s.decode))
	for _, c := range s.in.Status().Blocked {
		blocked[c] = true
	}
	for c, b := range blocked {
		if b {
			s.gate.Block(c)
		} else {
			s.gate.Unblock(c)
		}
	}
	s.inbox = r.inboxes[id.Vertex][id.Subtask]
	s.det = r.dets[id.Vertex][id.Subtask]
	s.log = r.logs[id.Vertex][id.Subtask]
	m := r.metrics[id.Vertex][id.Subtask]
	s.tctx.Metrics = m
	for _, o := range s.outs {
		o.setMetrics(m)
	}
	m.Takeovers.Add(1)
	s.log.TakenOver()
	r.mu.Lock()
	failure, failedAt := st.failure, st.failedAt
	r.mu.Unlock()
	r.opts.Host.TakenOver(id, failure, time.Unix(0, failedAt))
}

// standbyBarrier is a standby's side of checkpoint id: it forwards the
// barrier, as its primary does, and notes where its retained output may
// be trimmed, but takes no snapshot; its primary's is the subtask's.
// mustAlign marks the barrier as its primary marks it; recv are the
// records it consumed per input channel.
func (s *subtask) standbyBarrier(id int64, mustAlign bool, recv []int64) {
	s.lastCheckpoint = id
	s.emit(exchange.Element{Kind: exchange.Barrier, Checkpoint: id, MustAlign: mustAlign})
	s.noteTrimPoint(id, s.channelCounts(recv))
}
