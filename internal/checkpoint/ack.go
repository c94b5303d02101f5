package checkpoint

import (
	"fmt"
	"maps"
	"slices"

	"github.com/weir-stream/weir/internal/dataflow"
)

// Ack reports that task stored its state for checkpoint id under handle. The
// result classifies the acknowledgement (see AckResult). When the last
// expected task acknowledges, Ack returns Persist; when the handle is
// referenced by no checkpoint it returns Discard.
//
// The classification, in order:
//   - id never triggered by this coordinator, or forgotten: AckUnknown,
//     handle kept (it may belong to an earlier coordinator's checkpoint);
//   - task not in Config.Tasks: AckUnknown, Discard;
//   - checkpoint aborted: AckLate, Discard;
//   - task already acknowledged: AckDuplicate, Discard if the handle differs
//     from the first one and the checkpoint is still in flight;
//   - otherwise: AckSuccess.
func (c *Coordinator) Ack(id ID, task dataflow.SubtaskID, handle Handle) (AckResult, []Action) {
	if id < c.cfg.FirstID || id >= c.nextID {
		return AckUnknown, nil
	}
	discard := []Action{Discard{ID: id, Task: task, Handle: handle}}
	p := c.find(id)
	if p == nil {
		s, ok := c.finishedStats(id)
		switch {
		case !ok:
			return AckUnknown, nil
		case !c.tasks[task]:
			return AckUnknown, discard
		case s.Status == StatusAborted:
			return AckLate, discard
		}
		// Completed: every task acknowledged already, and the handle the
		// checkpoint kept is no longer here to compare with.
		return AckDuplicate, nil
	}
	if !c.tasks[task] {
		return AckUnknown, discard
	}
	if first, ok := p.acked[task]; ok {
		if first == handle {
			return AckDuplicate, nil // a retry: the handle is the checkpoint's
		}
		return AckDuplicate, discard
	}
	// Not yet acknowledged by task, so p is still pending.
	p.acked[task] = handle
	p.stats.Acks++
	if len(p.acked) < len(c.cfg.Tasks) {
		return AckSuccess, nil
	}
	p.stats.Status = StatusPersisting
	return AckSuccess, []Action{Persist{ID: id, Handles: maps.Clone(p.acked)}}
}

// Decline reports that task cannot take checkpoint id, for cause. A pending
// checkpoint is aborted with ReasonDeclined, which counts as a failure.
// Declines for checkpoints not pending (unknown, being persisted or
// finished) or from tasks not in Config.Tasks change nothing.
func (c *Coordinator) Decline(id ID, task dataflow.SubtaskID, cause string) []Action {
	p := c.find(id)
	if p == nil || p.stats.Status != StatusPending || !c.tasks[task] {
		return nil
	}
	return c.abort(nil, p, Abort{ID: id, Reason: ReasonDeclined, Task: task, Detail: cause})
}

// NotReady reports that task cannot take part in checkpoint id yet, for
// cause: as Decline, but the abort (ReasonNotReady) does not count as a
// failure.
func (c *Coordinator) NotReady(id ID, task dataflow.SubtaskID, cause string) []Action {
	p := c.find(id)
	if p == nil || p.stats.Status != StatusPending || !c.tasks[task] {
		return nil
	}
	return c.abort(nil, p, Abort{ID: id, Reason: ReasonNotReady, Task: task, Detail: cause})
}

// Stored reports that the metadata of checkpoint id, requested by Persist,
// is durably written. The checkpoint completes: Stored returns Complete,
// resets the count of consecutive failures and aborts older pending
// checkpoints as ReasonSubsumed. If a newer checkpoint completed while this
// one was being written, this one is aborted as ReasonSubsumed instead, so
// that Complete IDs only increase; the shell deletes the metadata it wrote.
//
// Stored panics if no Persist for id is outstanding: that is a bug in the
// shell.
func (c *Coordinator) Stored(id ID) []Action {
	p := c.persisting("Stored", id)
	if id < c.lastCompleted {
		return c.abort(nil, p, Abort{ID: id, Reason: ReasonSubsumed})
	}
	c.finish(p, StatusCompleted)
	c.lastCompleted = id
	c.failures = 0
	out := []Action{Complete{ID: id}}
	for _, q := range slices.Clone(c.inflight) {
		if q.stats.ID < id && q.stats.Status == StatusPending {
			out = c.abort(out, q, Abort{ID: q.stats.ID, Reason: ReasonSubsumed})
		}
	}
	return out
}

// StoreFailed reports that the metadata of checkpoint id, requested by
// Persist, could not be written. The checkpoint is aborted with
// ReasonStoreFailed, which counts as a failure unless a newer checkpoint has
// completed. The shell deletes whatever part of the metadata it wrote.
//
// StoreFailed panics if no Persist for id is outstanding: that is a bug in
// the shell.
func (c *Coordinator) StoreFailed(id ID, err error) []Action {
	p := c.persisting("StoreFailed", id)
	detail := "unknown error"
	if err != nil {
		detail = err.Error()
	}
	return c.abort(nil, p, Abort{ID: id, Reason: ReasonStoreFailed, Detail: detail})
}

func (c *Coordinator) persisting(method string, id ID) *inflight {
	p := c.find(id)
	if p == nil || p.stats.Status != StatusPersisting {
		panic(fmt.Sprintf("checkpoint: %s(%d) without an outstanding Persist", method, id))
	}
	return p
}
