package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/weir-stream/weir/internal/checkpoint"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// This file is the engine's side of a live rescale: a request changes
// the parallelism of some tasks of a running attempt at one aligned
// checkpoint. The tasks that change and those downstream of them (the
// cone) are replaced at its barrier by subtasks at the new parallelism,
// which start from it once it completed; the rest of the job — its
// sources first — runs on, and the checkpoints after it are taken of the
// new plan (task/reshape.go tells the runtime's side). No checkpoint is
// triggered between the rescale's and the new subtasks' start.

// RescaleRequest asks a running job to change the parallelism of some of
// its tasks without a restart.
type RescaleRequest struct {
	// Parallelism maps a task (a vertex ID of the job's plan) to its new
	// parallelism.
	Parallelism map[int]int
	// Reply receives the one result; it must have room for it.
	Reply chan<- RescaleResult
}

// RescaleResult is the outcome of a RescaleRequest.
type RescaleResult struct {
	// Checkpoint is the checkpoint at which the tasks changed.
	Checkpoint int64
	// Plan is the plan the job runs from then on.
	Plan *plan.Plan
	// Replaced lists the subtasks that run anew: those of the cone.
	Replaced int
	// Pause runs from the checkpoint's trigger to when every new subtask
	// restored its state.
	Pause time.Duration
	Err   error
}

// ErrNotLive means a rescale cannot happen in the running attempt; the
// error says why. A cluster's coordinator then stops the job at a
// checkpoint and starts it again at the new parallelism.
var ErrNotLive = errors.New("the job cannot change parallelism while it runs")

// Reshaper is an optional ability of an Executor: a live rescale.
type Reshaper interface {
	// PrepareReshape readies checkpoint at as the point where the cone's
	// vertices of plan p (the job's plan at the new parallelism) are
	// replaced, before at is triggered. If the new subtasks take their
	// state from the retired ones in memory (task.CanHandOver), they start
	// now, and early is closed once they all restored it: they run before
	// at completes, and StartReshape is not called. Otherwise early is
	// nil.
	PrepareReshape(at int64, p *plan.Plan, cone map[int]bool) (early <-chan struct{}, err error)
	// StartReshape starts the cone's new subtasks from checkpoint m (the
	// rescale's, completed), which they read at p's layout, and returns a
	// channel closed once they all restored it. It returns at once: the
	// reading and restoring go on in the background, and a failure of it
	// fails the attempt.
	StartReshape(m *store.Metadata) (<-chan struct{}, error)
}

// pendingRescale is a rescale under way.
type pendingRescale struct {
	RescaleRequest
	plan      *plan.Plan
	from      map[int]int // the changed tasks' parallelism before
	cone      map[int]bool
	at        int64     // its checkpoint, once triggered
	triggered time.Time // when at was
	completed bool      // at completed: the job's plan is plan
	started   bool      // StartReshape was called, or the wait for early began
	// early, if not nil, is the executor's hand-over in memory: the new
	// subtasks started at the trigger and restored when restoredAt
	// receives.
	early      <-chan struct{}
	restoredAt chan time.Time
}

// reshaped is the outcome of starting a rescale's new subtasks.
type reshaped struct {
	err   error
	pause time.Duration
}

// requestRescale starts a live rescale, unless the attempt cannot take
// one, and triggers its checkpoint.
func (a *attemptState) requestRescale(r RescaleRequest) {
	if err := a.refuseRescale(r); err != nil {
		r.Reply <- RescaleResult{Err: err}
		return
	}
	p, err := a.e.cfg.Plan.WithParallelism(r.Parallelism)
	if err != nil {
		r.Reply <- RescaleResult{Err: err}
		return
	}
	cone := p.Downstream(slices.Collect(maps.Keys(r.Parallelism))...)
	for id := range a.finished {
		if cone[id.Vertex] {
			r.Reply <- RescaleResult{Err: fmt.Errorf("%w: subtask %d of %q finished its input", ErrNotLive, id.Subtask, p.Vertices[id.Vertex].Name())}
			return
		}
	}
	from := map[int]int{}
	for v := range r.Parallelism {
		from[v] = a.e.cfg.Plan.Vertices[v].Parallelism
	}
	a.rescale = &pendingRescale{RescaleRequest: r, plan: p, from: from, cone: cone}
	if acts, err := a.coord.TriggerNow(); err == nil {
		a.act(acts) // rescaleTriggered takes it
	}
}

// refuseRescale says why the attempt cannot change parallelism live, or
// returns nil.
func (a *attemptState) refuseRescale(r RescaleRequest) error {
	e := a.e
	switch {
	case a.coord == nil:
		return fmt.Errorf("%w: it takes no checkpoints", ErrNotLive)
	case a.rescale != nil:
		return errors.New("a rescale is under way")
	case a.stopAt != 0 || len(e.saveQueue) > 0 || len(e.saveFor) > 0:
		return errors.New("a savepoint is under way")
	case e.cfg.Runtime.UpstreamBackup || e.cfg.Runtime.ActiveStandby:
		return fmt.Errorf("%w: its upstream backup and standbys know only the channels they started with", ErrNotLive)
	}
	if _, ok := a.failover.(*globalFailover); !ok {
		return fmt.Errorf("%w: it recovers by region", ErrNotLive)
	}
	if _, ok := a.rt.(Reshaper); !ok {
		return fmt.Errorf("%w: its executor cannot", ErrNotLive)
	}
	if len(r.Parallelism) == 0 {
		return errors.New("no task to rescale")
	}
	for id := range r.Parallelism {
		if id >= 0 && id < len(e.cfg.Plan.Vertices) && e.cfg.Plan.Vertices[id].Head().Kind == plan.Source {
			return fmt.Errorf("%w: source %q would change parallelism, and its positions move only at a restart", ErrNotLive, e.cfg.Plan.Vertices[id].Name())
		}
	}
	return nil
}

// rescaleTriggered makes checkpoint id, about to be triggered, the
// pending rescale's, if one waits for its checkpoint; how becomes
// aligned. It reports a failure to prepare the executor by failing the
// rescale.
func (a *attemptState) rescaleTriggered(id int64, how task.TriggerOptions) task.TriggerOptions {
	rs := a.rescale
	if rs == nil || rs.at != 0 {
		return how
	}
	early, err := a.rt.(Reshaper).PrepareReshape(id, rs.plan, rs.cone)
	if err != nil {
		a.rescale = nil
		rs.Reply <- RescaleResult{Err: err}
		return how
	}
	rs.at, rs.triggered = id, time.Now()
	if early != nil {
		rs.early, rs.restoredAt = early, make(chan time.Time, 1)
		a.runs.Add(1)
		go func() {
			defer a.runs.Done()
			select {
			case <-early:
				rs.restoredAt <- time.Now()
			case <-a.stopped:
			}
		}()
	}
	a.e.cfg.Log(fmt.Sprintf("checkpoint %d rescales %s live", id, describeChanges(a.e.cfg.Plan, rs.Parallelism)))
	how.Aligned = true
	return how
}

// triggersHeld reports whether no checkpoint may be triggered: a
// rescale's checkpoint was, and its new subtasks have not started.
func (a *attemptState) triggersHeld() bool { return a.rescale != nil && a.rescale.at != 0 }

// rescaleCompleted notes that checkpoint id completed: if it is the
// rescale's, the job's plan is the new one from now on (a restart
// restores it at the new parallelism), and the loop starts the new
// subtasks (startReshape).
func (a *attemptState) rescaleCompleted(id int64) {
	if rs := a.rescale; rs != nil && rs.at == id {
		rs.completed = true
		a.e.cfg.Plan = rs.plan
	}
}

// rescaleAborted fails the attempt if checkpoint id is the rescale's:
// some senders send to the new subtasks already, so the job restarts
// from its latest completed checkpoint at the old parallelism.
func (a *attemptState) rescaleAborted(id int64, reason string) {
	if rs := a.rescale; rs != nil && rs.at == id {
		a.rescale = nil
		err := fmt.Errorf("the live rescale's checkpoint %d was aborted (%s)", id, reason)
		rs.Reply <- RescaleResult{Checkpoint: id, Err: err}
		if a.failure == nil {
			a.failure = fmt.Errorf("%w: the job restarts from its latest completed checkpoint at the old parallelism", err)
		}
	}
}

// startReshape reads the rescale's checkpoint at the new layout and
// starts the new subtasks from it, on a goroutine the attempt owns, which
// tells the loop through done.
func (a *attemptState) startReshape(ctx context.Context, done chan<- reshaped) {
	rs := a.rescale
	rs.started = true
	e := a.e
	m := e.latest
	a.runs.Add(1)
	if rs.early != nil {
		go func() {
			defer a.runs.Done()
			var out reshaped
			select {
			case t := <-rs.restoredAt:
				out.pause = t.Sub(rs.triggered)
			case <-ctx.Done():
				out.err = ctx.Err()
			}
			select {
			case done <- out:
			case <-a.stopped:
			}
		}()
		return
	}
	go func() {
		defer a.runs.Done()
		var out reshaped
		restored, err := a.rt.(Reshaper).StartReshape(m)
		if err == nil {
			select {
			case <-restored:
			case <-ctx.Done():
				err = ctx.Err()
			}
		}
		out.err, out.pause = err, time.Since(rs.triggered)
		select {
		case done <- out:
		case <-a.stopped:
		}
	}()
}

// reshapeDone finishes the rescale once its new subtasks started (or
// failed to): the checkpoint coordinator starts over with the new
// plan's subtasks, and the request is answered.
func (a *attemptState) reshapeDone(r reshaped) {
	rs := a.rescale
	a.rescale = nil
	e := a.e
	if r.err != nil {
		err := fmt.Errorf("starting the rescaled tasks from checkpoint %d: %w", rs.at, r.err)
		rs.Reply <- RescaleResult{Checkpoint: rs.at, Err: err}
		if a.failure == nil {
			a.failure = fmt.Errorf("%w: the job restarts from it at the new parallelism", err)
		}
		return
	}
	a.tasks = subtasks(rs.plan, func(int) bool { return true })
	for id := range a.finished {
		if rs.cone[id.Vertex] && rs.early == nil {
			// A retired subtask's: its successor, which started after
			// the rescale's checkpoint completed, tells again. One that
			// started early may have told already.
			delete(a.finished, id)
		}
	}
	coord, err := checkpoint.New(e.coordinatorConfig(a.tasks))
	if err != nil {
		a.failure = &fatalError{err}
		return
	}
	a.coord = coord
	replaced := len(subtasks(rs.plan, func(v int) bool { return rs.cone[v] }))
	e.cfg.Log(fmt.Sprintf("rescaled %s live at checkpoint %d: %d subtasks replaced, paused %v", describeChanges(rs.plan, rs.Parallelism), rs.at, replaced, r.pause.Round(time.Millisecond)))
	for v, n := range rs.Parallelism {
		e.report.Rescales = append(e.report.Rescales, Rescale{At: rs.triggered, Task: rs.plan.Vertices[v].Name(), From: rs.from[v], To: n,
			Checkpoint: rs.at, Cause: "requested", Pause: r.pause, Live: true})
	}
	e.publish()
	rs.Reply <- RescaleResult{Checkpoint: rs.at, Plan: rs.plan, Replaced: replaced, Pause: r.pause}
}

// failRescale answers a rescale still under way when the attempt ends.
func (a *attemptState) failRescale(err error) {
	rs := a.rescale
	if rs == nil {
		return
	}
	a.rescale = nil
	if err == nil {
		err = errors.New("the job ended")
	}
	if rs.completed {
		err = fmt.Errorf("the attempt ended before the rescaled tasks started (%w); the job restarts at the new parallelism", err)
	}
	rs.Reply <- RescaleResult{Checkpoint: rs.at, Err: err}
}

// describeChanges names the tasks of p in changes with their new
// parallelism.
func describeChanges(p *plan.Plan, changes map[int]int) string {
	var parts []string
	for _, v := range p.Vertices {
		if n, ok := changes[v.ID]; ok {
			parts = append(parts, fmt.Sprintf("%q to %d", v.Name(), n))
		}
	}
	return strings.Join(parts, ", ")
}
