package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/recovery"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// Failover is a job's failover strategy: what restarts when a task fails
// (package recovery defines them).
type Failover = recovery.Failover

const (
	// Global restarts every task of the job from the latest checkpoint.
	Global = recovery.Global
	// FineGrained restarts only the failed task's pipelined region (the
	// tasks connected to it by edges), from the latest checkpoint; the
	// other regions keep running and their sources do not rewind.
	FineGrained = recovery.FineGrained
)

// failover is how an attempt carries out the job's Failover: it deploys
// the attempt, says what restarts when a failure arrives, and carries the
// restarts out. The attempt's loop (loop.go) calls it from its one
// goroutine and owns everything the strategies share: the coordinator's
// ticks, snapshots, finished subtasks, injected failures, stall checks
// and recovery times.
//
// There are three: globalFailover ends the attempt at a failure and the
// engine restarts the job as a whole; regionFailover restarts the failed
// pipelined region; subtaskFailover restarts the failed subtask and its
// cone, with upstream backup.
type failover interface {
	// restarts returns the subtasks that restart when subtask id fails.
	restarts(id dataflow.SubtaskID) []dataflow.SubtaskID
	// start deploys the attempt from restore, runs its executors
	// (attemptState.run) and arms its injected failure (attemptState.arm)
	// from when it can occur. It returns the executor the loop drives.
	start(ctx context.Context, a *attemptState, restore *store.Metadata) (Executor, error)
	// ended handles the return of executor part's Run with err. It
	// reports whether the attempt ends, and with which error.
	ended(ctx context.Context, a *attemptState, part int, err error) (bool, error)
	// failed handles the failure of subtask id alone, which did not end
	// its executor's Run (task.Host.Failed); an error ends the
	// attempt.
	failed(ctx context.Context, a *attemptState, id dataflow.SubtaskID, err error) error
	// tick carries out the restarts that are due; an error ends the
	// attempt.
	tick(ctx context.Context, a *attemptState) error
	// restarted returns a channel that is closed once the restart under
	// way is done (its subtasks restored their state and asked for their
	// replays), or nil when no restart waits for that; the loop then
	// calls onRestarted.
	restarted() <-chan struct{}
	onRestarted(a *attemptState)
	// recovered returns, once the recovery under way since a.restarted
	// ended, how long it took.
	recovered(a *attemptState) (time.Duration, bool)
	// fail ends the attempt with its own failure err (a stall, too many
	// failed checkpoints). It reports whether the loop runs on until the
	// executors' Run returned, and otherwise the loop returns err at once.
	fail(a *attemptState, err error) bool
}

// failover returns the strategy of the engine's attempts.
func (e *engine) failover() failover {
	if e.taskFailover() {
		return newSubtaskFailover(e.cfg.Plan)
	}
	if regions := e.cfg.Plan.Regions(); e.fineGrained() && len(regions) > 1 {
		return newRegionFailover(e.cfg.Plan, regions)
	}
	return &globalFailover{plan: e.cfg.Plan}
}

// fineGrained reports whether failures restart single regions: with
// checkpoints (exactly-once and at-least-once).
func (e *engine) fineGrained() bool {
	return e.cfg.Failover == FineGrained && e.checkpoints()
}

// globalFailover runs the plan as one executor and ends the attempt at
// its first failure: the engine then restarts the job as a whole
// (engine.run).
type globalFailover struct {
	plan *plan.Plan
	x    Executor
}

// restarts returns every subtask of the job.
func (g *globalFailover) restarts(dataflow.SubtaskID) []dataflow.SubtaskID {
	return subtasks(g.plan, func(int) bool { return true })
}

func (g *globalFailover) start(ctx context.Context, a *attemptState, restore *store.Metadata) (Executor, error) {
	// Armed before the deployer starts the attempt, so that a point of
	// its restore can fail it, and a random kill's time runs while a
	// cluster's deployer waits for slots.
	a.arm(restore != nil)
	x, err := a.deploy(ctx, a.spec(ctx, restore))
	if err != nil {
		return nil, err
	}
	g.x = x
	a.run(ctx, 0, x)
	return x, nil
}

func (g *globalFailover) ended(_ context.Context, a *attemptState, _ int, err error) (bool, error) {
	a.noteRecovery()
	if a.e.cfg.Mode == AtMostOnce {
		a.e.keepPositions(g.x)
	}
	return true, err
}

func (g *globalFailover) failed(_ context.Context, _ *attemptState, _ dataflow.SubtaskID, err error) error {
	return err // no executor of a global attempt reports single subtasks
}

func (g *globalFailover) tick(context.Context, *attemptState) error { return nil }
func (g *globalFailover) restarted() <-chan struct{}                { return nil }
func (g *globalFailover) onRestarted(*attemptState)                 {}

func (g *globalFailover) recovered(a *attemptState) (time.Duration, bool) {
	return firstOutputSince(g.x, a.restarted)
}

// fail kills the attempt with err and lets its Run return with it.
func (g *globalFailover) fail(_ *attemptState, err error) bool {
	g.x.Kill(dataflow.SubtaskID{}, err)
	return true
}

// firstOutputSince returns how long after restarted x's sinks wrote their
// first record, once they wrote one.
func firstOutputSince(x Executor, restarted time.Time) (time.Duration, bool) {
	if x == nil || x.Written() == 0 {
		return 0, false
	}
	took := time.Since(restarted)
	if f, ok := x.(FirstOutputer); ok {
		if t := f.FirstOutput(); !t.IsZero() && t.After(restarted) {
			took = t.Sub(restarted)
		}
	}
	return took, true
}

// subtasks returns the subtasks of the plan's vertices that in accepts,
// in the plan's order.
func subtasks(p *plan.Plan, in func(vertex int) bool) []dataflow.SubtaskID {
	var out []dataflow.SubtaskID
	for _, v := range p.Vertices {
		if in(v.ID) {
			for i := range v.Parallelism {
				out = append(out, dataflow.SubtaskID{Vertex: v.ID, Subtask: i})
			}
		}
	}
	return out
}

// partialFailure records a failure after which restarted of the job's
// subtasks restart while the others run on, and returns the restart
// strategy's delay, or a fatal error when the strategy gave up.
func (e *engine) partialFailure(cause error, restarted int, now time.Time) (time.Duration, error) {
	if task.IsPermanent(cause) {
		return 0, &fatalError{cause}
	}
	rec := Recovery{Cause: cause.Error(), FailedAt: now, LastCompleted: e.report.LastCompleted(),
		Restarted: restarted, Subtasks: e.cfg.Plan.Subtasks()}
	if e.latest != nil {
		rec.Restored = int64(e.latest.ID)
	}
	e.report.Recoveries = append(e.report.Recoveries, rec)
	e.publish()
	delay, ok := e.cfg.Restart.Next(now)
	if !ok {
		return 0, &fatalError{fmt.Errorf("restart strategy %s gave up after %d failures: %w", e.cfg.Restart, len(e.report.Recoveries), cause)}
	}
	return delay, nil
}

// restartLater notes that ids restart at at, after a failure at now
// while the others run on: the checkpoints in flight are aborted and
// triggering pauses until the strategy resumes it, ids are no longer
// finished, the recovery time runs from now, and until at the attempt
// waits by design, not stalled.
func (a *attemptState) restartLater(ids []dataflow.SubtaskID, now, at time.Time) {
	a.act(a.coord.JobFailed())
	for _, id := range ids {
		delete(a.finished, id)
	}
	a.allDone = false
	a.restarted = now
	if at.After(a.restartDue) {
		a.restartDue = at
	}
}
