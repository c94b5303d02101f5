package checkpoint

import (
	"cmp"
	"fmt"
	"slices"
)

// Status is where a checkpoint is in its life:
//
//	Pending --all acks--> Persisting --Stored--> Completed
//	   |                      |
//	   +--timeout, decline,   +--StoreFailed, or Stored after a
//	      job failure,           newer checkpoint completed--> Aborted
//	      subsumed--> Aborted
type Status int

const (
	// StatusPending: triggered, collecting acknowledgements.
	StatusPending Status = iota + 1
	// StatusPersisting: all tasks acknowledged; Persist was emitted and the
	// coordinator waits for Stored or StoreFailed.
	StatusPersisting
	// StatusCompleted: Complete was emitted.
	StatusCompleted
	// StatusAborted: Abort was emitted.
	StatusAborted
)

func (s Status) String() string {
	switch s {
	case StatusPending:
		return "pending"
	case StatusPersisting:
		return "persisting"
	case StatusCompleted:
		return "completed"
	case StatusAborted:
		return "aborted"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Stats describes one checkpoint, for the history API and metrics.
type Stats struct {
	ID     ID
	Status Status
	// Manual is true for checkpoints started by TriggerNow.
	Manual bool
	// Triggered is the tick of the trigger.
	Triggered int64
	// Finished is the tick of completion or abort; zero while in flight.
	Finished int64
	// Acks counts accepted acknowledgements, out of Tasks.
	Acks, Tasks int
	// Reason and Cause say why an aborted checkpoint was aborted; Cause is
	// human-readable, e.g. "declined by 2.0: disk full".
	Reason Reason
	Cause  string
}

func (s Stats) String() string {
	str := fmt.Sprintf("%d %s triggered=%d", s.ID, s.Status, s.Triggered)
	if s.Manual {
		str += " manual"
	}
	if s.Status == StatusCompleted || s.Status == StatusAborted {
		str += fmt.Sprintf(" finished=%d", s.Finished)
	}
	str += fmt.Sprintf(" acks=%d/%d", s.Acks, s.Tasks)
	if s.Status == StatusAborted {
		str += " cause=" + s.Cause
	}
	return str
}

// History returns the checkpoints in flight and the last Config.History
// finished ones, by increasing ID.
func (c *Coordinator) History() []Stats {
	out := make([]Stats, 0, len(c.finished)+len(c.inflight))
	out = append(out, c.finished...)
	for _, p := range c.inflight {
		out = append(out, p.stats)
	}
	slices.SortFunc(out, func(a, b Stats) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Stats returns what the coordinator remembers about checkpoint id: false if
// it never triggered id or has forgotten it (see Config.History).
func (c *Coordinator) Stats(id ID) (Stats, bool) {
	if p := c.find(id); p != nil {
		return p.stats, true
	}
	return c.finishedStats(id)
}

func (c *Coordinator) finishedStats(id ID) (Stats, bool) {
	for _, s := range c.finished {
		if s.ID == id {
			return s, true
		}
	}
	return Stats{}, false
}

// remember records a finished checkpoint, forgetting the oldest-finished
// one beyond Config.History.
func (c *Coordinator) remember(s Stats) {
	c.finished = append(c.finished, s)
	if extra := len(c.finished) - c.cfg.History; extra > 0 {
		c.finished = slices.Delete(c.finished, 0, extra)
	}
}
