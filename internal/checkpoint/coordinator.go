// Package checkpoint decides when a job takes a checkpoint and when a
// checkpoint is complete. It is the protocol only: a pure state machine in
// the style of etcd's raft. Facts go in as method calls (a tick passed, a
// task acknowledged, metadata was stored), decisions come out as Actions
// (trigger, persist, complete, abort, discard, fail the job). It starts no
// goroutines, reads no clock and does no I/O; the shell does all of that.
//
// # Contract
//
// The shell owns one Coordinator per job and calls it from one goroutine
// (a Coordinator is not safe for concurrent use):
//
//  1. New, once the job's tasks are running.
//  2. Tick once per tick of the shell's clock. Intervals, pauses and
//     timeouts in Config count these ticks.
//  3. Ack and Decline when a task reports on a checkpoint; TriggerNow for a
//     manual checkpoint.
//  4. For every Persist action, exactly one of Stored or StoreFailed once
//     the metadata write has finished.
//  5. JobFailed when the job fails or restarts; Resume when it runs again.
//
// Every call returns the actions it decided, in the order the shell must
// carry them out; nothing is left behind to be collected later. Each
// triggered checkpoint ends with exactly one Complete or one Abort.
//
// Checkpoints that have reached Persist are in the shell's hands: timeouts
// and job failures do not abort them, only their own Stored or StoreFailed
// ends them. A shell that restarts the job waits for its outstanding
// metadata writes before choosing the checkpoint to restore from.
package checkpoint

import (
	"errors"
	"slices"

	"github.com/weir-stream/weir/internal/dataflow"
)

// Coordinator is the checkpoint protocol of one job. Create it with New.
type Coordinator struct {
	cfg   Config
	tasks map[dataflow.SubtaskID]bool

	now     int64
	nextID  ID
	running bool

	// nextPeriodic is the tick at which the next periodic trigger is due.
	nextPeriodic int64
	// lastEnd is the tick the last checkpoint completed or aborted at, if
	// ended; MinPause counts from it.
	lastEnd int64
	ended   bool

	// inflight holds the pending and persisting checkpoints by increasing ID.
	inflight      []*inflight
	lastCompleted ID
	// failures counts consecutive failed checkpoints, see TolerableFailures.
	failures int
	// finished remembers the last Config.History finished checkpoints.
	finished []Stats
}

type inflight struct {
	stats Stats
	acked map[dataflow.SubtaskID]Handle
}

var (
	// ErrNotRunning is returned by TriggerNow between JobFailed (or FailJob)
	// and Resume.
	ErrNotRunning = errors.New("job is not running")
	// ErrTooManyConcurrent is returned by TriggerNow when
	// Config.MaxConcurrent checkpoints are already in flight.
	ErrTooManyConcurrent = errors.New("too many concurrent checkpoints")
)

// New returns a running coordinator at tick 0 whose first periodic trigger
// is due at tick Config.Interval. The error wraps ErrBadConfig.
func New(cfg Config) (*Coordinator, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	c := &Coordinator{
		cfg:          cfg,
		tasks:        make(map[dataflow.SubtaskID]bool, len(cfg.Tasks)),
		nextID:       cfg.FirstID,
		running:      true,
		nextPeriodic: cfg.Interval,
	}
	for _, t := range cfg.Tasks {
		c.tasks[t] = true
	}
	return c, nil
}

// Now returns the number of ticks so far.
func (c *Coordinator) Now() int64 { return c.now }

// NextID returns the ID the next trigger will use.
func (c *Coordinator) NextID() ID { return c.nextID }

// Running reports whether the coordinator triggers checkpoints: false
// between JobFailed (or FailJob) and Resume.
func (c *Coordinator) Running() bool { return c.running }

// Tick advances time by one tick. It first aborts pending checkpoints that
// reached Config.Timeout, then triggers a periodic checkpoint if one is due
// and allowed: the job is running, Interval ticks have passed since the
// previous trigger, MinPause ticks have passed since the previous
// checkpoint ended, and fewer than MaxConcurrent are in flight. A due
// trigger held back by MinPause or MaxConcurrent happens on the first tick
// that allows it, and the next one is due Interval ticks after that.
func (c *Coordinator) Tick() []Action {
	c.now++
	var out []Action
	var expired []ID
	for _, p := range c.inflight {
		if p.stats.Status == StatusPending && c.now-p.stats.Triggered >= c.cfg.Timeout {
			expired = append(expired, p.stats.ID)
		}
	}
	for _, id := range expired {
		// An earlier abort may have failed the job and aborted this one.
		if p := c.find(id); p != nil {
			out = c.abort(out, p, Abort{ID: id, Reason: ReasonTimeout})
		}
	}
	if c.periodicDue() {
		out = c.trigger(out, false)
	}
	return out
}

func (c *Coordinator) periodicDue() bool {
	return c.running &&
		c.cfg.Interval > 0 &&
		c.now >= c.nextPeriodic &&
		len(c.inflight) < c.cfg.MaxConcurrent &&
		(!c.ended || c.now >= c.lastEnd+c.cfg.MinPause)
}

// TriggerNow triggers a checkpoint at once, for a savepoint or a test. It
// ignores Interval and MinPause but not MaxConcurrent: it fails with
// ErrTooManyConcurrent rather than wait, and with ErrNotRunning while the
// job is not running. The next periodic trigger is due Interval ticks
// later. The checkpoint is otherwise an ordinary one: it times out, counts
// towards TolerableFailures and can be subsumed.
func (c *Coordinator) TriggerNow() ([]Action, error) {
	if !c.running {
		return nil, ErrNotRunning
	}
	if len(c.inflight) >= c.cfg.MaxConcurrent {
		return nil, ErrTooManyConcurrent
	}
	return c.trigger(nil, true), nil
}

func (c *Coordinator) trigger(out []Action, manual bool) []Action {
	id := c.nextID
	c.nextID++
	c.inflight = append(c.inflight, &inflight{
		stats: Stats{
			ID:        id,
			Status:    StatusPending,
			Manual:    manual,
			Triggered: c.now,
			Tasks:     len(c.cfg.Tasks),
		},
		acked: make(map[dataflow.SubtaskID]Handle, len(c.cfg.Tasks)),
	})
	c.nextPeriodic = c.now + c.cfg.Interval
	return append(out, Trigger{ID: id, Timestamp: c.now, Sources: slices.Clone(c.cfg.Sources)})
}

// JobFailed tells the coordinator the job failed or is restarting: it aborts
// every pending checkpoint with ReasonJobFailure and stops triggering until
// Resume. Checkpoints being persisted are left to finish (see the package
// comment). Calling it while stopped does nothing.
func (c *Coordinator) JobFailed() []Action {
	return c.stop(nil)
}

func (c *Coordinator) stop(out []Action) []Action {
	c.running = false
	for _, p := range slices.Clone(c.inflight) {
		if p.stats.Status == StatusPending {
			out = c.abort(out, p, Abort{ID: p.stats.ID, Reason: ReasonJobFailure})
		}
	}
	return out
}

// Resume tells the coordinator the job runs again after JobFailed or
// FailJob. Checkpoint IDs continue where they were, the count of
// consecutive failures restarts from zero (so a job failed for too many
// failures gets a fresh allowance), and the next periodic trigger is due
// Interval ticks from now. Calling it while running does nothing.
func (c *Coordinator) Resume() {
	if c.running {
		return
	}
	c.running = true
	c.failures = 0
	c.nextPeriodic = c.now + c.cfg.Interval
}

// find returns the in-flight checkpoint id, or nil.
func (c *Coordinator) find(id ID) *inflight {
	for _, p := range c.inflight {
		if p.stats.ID == id {
			return p
		}
	}
	return nil
}

// finish takes p out of flight as completed or aborted.
func (c *Coordinator) finish(p *inflight, status Status) {
	c.inflight = slices.DeleteFunc(c.inflight, func(q *inflight) bool { return q == p })
	p.stats.Status = status
	p.stats.Finished = c.now
	c.remember(p.stats)
	c.lastEnd, c.ended = c.now, true
}

// abort ends p with a (whose Handles it fills in), and counts the failure,
// failing the job when there are too many.
func (c *Coordinator) abort(out []Action, p *inflight, a Abort) []Action {
	if len(p.acked) > 0 {
		a.Handles = p.acked
	}
	p.stats.Reason, p.stats.Cause = a.Reason, a.cause()
	c.finish(p, StatusAborted)
	out = append(out, a)

	// A failure older than the last completed checkpoint no longer matters:
	// the job has a newer checkpoint to fall back on.
	if !a.Reason.CountsAsFailure() || a.ID < c.lastCompleted {
		return out
	}
	c.failures++
	if c.running && c.cfg.TolerableFailures >= 0 && c.failures > c.cfg.TolerableFailures {
		out = append(out, FailJob{Failures: c.failures, Last: a})
		out = c.stop(out)
	}
	return out
}
