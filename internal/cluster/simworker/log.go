package simworker

import (
	"context"
	"sync"
	"time"
)

// Kind is what happened to a simulated worker.
type Kind int

const (
	// Joined: the coordinator welcomed the worker.
	Joined Kind = iota
	// Deployed: a share (Key) was deployed on the worker, by a Deploy
	// message of Bytes bytes.
	Deployed
	// Acked: the worker sent its last acknowledgement of Checkpoint.
	Acked
	// Completed: the completion of Checkpoint reached the worker.
	Completed
	// Aborted: the abort of Checkpoint reached the worker.
	Aborted
	// Cancelled: the coordinator cancelled the worker's share Key.
	Cancelled
	// Killed: the worker's session was killed (Kill).
	Killed
	// Ended: the worker's session ended otherwise (Err says why): the
	// coordinator refused it or dropped it.
	Ended
)

// Event is something that happened to a worker, and when.
type Event struct {
	Kind       Kind
	Worker     string
	Key        string
	Checkpoint int64
	Bytes      int
	Err        error
	At         time.Time
}

// Log collects the events of a fleet of simulated workers, in the order
// they happened. Its methods may be called from any goroutine.
type Log struct {
	mu      sync.Mutex
	events  []Event
	changed chan struct{} // closed and replaced at each event
}

// NewLog returns an empty log.
func NewLog() *Log { return &Log{changed: make(chan struct{})} }

func (l *Log) note(e Event) {
	e.At = time.Now()
	l.mu.Lock()
	l.events = append(l.events, e)
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// Events returns a copy of the events so far.
func (l *Log) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.events...)
}

// Await waits until ok holds for the events so far, and returns them; it
// returns ctx's error if ctx ends first.
func (l *Log) Await(ctx context.Context, ok func([]Event) bool) ([]Event, error) {
	for {
		l.mu.Lock()
		evs, changed := l.events, l.changed
		l.mu.Unlock()
		if ok(evs) {
			return append([]Event(nil), evs...), nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Count counts the events of kind (for Completed and Acked, of
// checkpoint id; 0: any).
func Count(evs []Event, kind Kind, id int64) int {
	n := 0
	for _, e := range evs {
		if e.Kind == kind && (id == 0 || e.Checkpoint == id) {
			n++
		}
	}
	return n
}

// LargestDeploy returns the size in bytes of the largest Deploy message
// in evs after from.
func LargestDeploy(evs []Event, from time.Time) int {
	n := 0
	for _, e := range evs {
		if e.Kind == Deployed && e.At.After(from) {
			n = max(n, e.Bytes)
		}
	}
	return n
}

// Checkpoint is what the workers saw of one checkpoint.
type Checkpoint struct {
	ID int64
	// Acks and Completions count the workers that sent their last
	// acknowledgement and that the completion reached.
	Acks, Completions int
	// LastAck is when the last worker sent its last acknowledgement;
	// FirstCompletion and LastCompletion when the completion reached the
	// first and the last worker.
	LastAck, FirstCompletion, LastCompletion time.Time
}

// Delay is the time from the last acknowledgement to the completion
// reaching every worker.
func (c Checkpoint) Delay() time.Duration { return c.LastCompletion.Sub(c.LastAck) }

// Checkpoints sums up the checkpoints in evs, by id.
func Checkpoints(evs []Event) map[int64]*Checkpoint {
	out := map[int64]*Checkpoint{}
	get := func(id int64) *Checkpoint {
		c := out[id]
		if c == nil {
			c = &Checkpoint{ID: id}
			out[id] = c
		}
		return c
	}
	for _, e := range evs {
		switch e.Kind {
		case Acked:
			c := get(e.Checkpoint)
			c.Acks++
			if e.At.After(c.LastAck) {
				c.LastAck = e.At
			}
		case Completed:
			c := get(e.Checkpoint)
			c.Completions++
			if c.FirstCompletion.IsZero() || e.At.Before(c.FirstCompletion) {
				c.FirstCompletion = e.At
			}
			if e.At.After(c.LastCompletion) {
				c.LastCompletion = e.At
			}
		}
	}
	return out
}

// Last returns the time of the latest event of kind in evs after from
// (for workers other than except), and how many there were.
func Last(evs []Event, kind Kind, from time.Time, except string) (time.Time, int) {
	var last time.Time
	n := 0
	for _, e := range evs {
		if e.Kind == kind && e.At.After(from) && e.Worker != except {
			n++
			if e.At.After(last) {
				last = e.At
			}
		}
	}
	return last, n
}
