package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/checkpoint"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// An attempt runs the plan once, from a checkpoint or from the start,
// until it finishes or fails as a whole. One loop drives it, whatever the
// job's failover: it ticks the checkpoint coordinator, takes the
// snapshots and finished subtasks the executors hand over, injects
// failures, watches for stalls and measures recoveries. The failover
// strategy (failover.go) deploys the attempt and handles the failures it
// recovers from inside the attempt: which subtasks restart, and how.

// ended is the return of an executor's Run: the attempt's one executor,
// or under region failover the executor of region part.
type ended struct {
	part int
	err  error
}

// failure is the failure of one subtask that did not end its executor's
// Run (fine-grained failover with upstream backup).
type failure struct {
	ids []dataflow.SubtaskID // one, or several that failed together
	err error
}

// attempt runs the plan once, until it finishes or fails. When it
// returns, every executor's Run it started has returned.
func (e *engine) attempt(ctx context.Context, restore *store.Metadata) error {
	a, err := e.newAttemptState(e.failover())
	if err != nil {
		return err
	}
	actx, cancel := context.WithCancel(ctx)
	defer a.stop(cancel)
	x, err := a.failover.start(actx, a, restore)
	if err != nil {
		return err
	}
	a.rt = x
	a.stall = e.newStallWatch(x)
	err = a.loop(actx)
	a.failRescale(err)
	if err != nil && a.stopAt != 0 && ctx.Err() == nil {
		// The savepoint is written and the job was to stop: it stops,
		// and a run restored from the savepoint commits what the sinks
		// had not.
		e.cfg.Log(fmt.Sprintf("stopped after the savepoint of checkpoint %d; the attempt failed while the sinks committed it (%v): a run restored from the savepoint commits what they had not", a.stopAt, err))
		e.report.Stopped = true
		return nil
	}
	if err == nil && a.stopAt != 0 && !e.report.Stopped {
		// The job read its input to the end as it stopped: the stop's
		// savepoint was its final checkpoint (none follows it), so it
		// holds all the job committed, and the stop is what ended it.
		e.cfg.Log(fmt.Sprintf("stopped after the savepoint of checkpoint %d, the job's final checkpoint", a.stopAt))
		e.report.Stopped = true
	}
	return err
}

// newAttemptState returns the bookkeeping of an attempt recovering by f,
// with a checkpoint coordinator when checkpoints are on.
func (e *engine) newAttemptState(f failover) (*attemptState, error) {
	e.requeueSavepoints() // a failed attempt's savepoint is taken again
	a := &attemptState{e: e, failover: f, finished: map[dataflow.SubtaskID]bool{}, acked: map[int64]map[dataflow.SubtaskID]bool{},
		counts: map[int64]map[dataflow.Channel][2]int64{},
		snaps:  make(chan Snapshot), fins: make(chan dataflow.SubtaskID), ends: make(chan ended), fails: make(chan failure),
		takeovers: make(chan takeover), stopped: make(chan struct{}), kills: killClock{in: e.cfg.Failures}, reshapes: make(chan reshaped)}
	if len(e.report.Recoveries) > 0 {
		a.restarted = e.report.Recoveries[len(e.report.Recoveries)-1].FailedAt
	}
	a.tasks = subtasks(e.cfg.Plan, func(int) bool { return true })
	if e.checkpoints() {
		coord, err := checkpoint.New(e.coordinatorConfig(a.tasks))
		if err != nil {
			return nil, &fatalError{err}
		}
		a.coord = coord
	}
	return a, nil
}

// loop handles the attempt's events until it ends.
func (a *attemptState) loop(ctx context.Context) error {
	f := a.failover
	ticker := time.NewTicker(a.e.cfg.Tick)
	defer ticker.Stop()
	var failed error // the attempt's own failure, which its Run returns with
	for {
		select {
		case d := <-a.ends:
			end, err := f.ended(ctx, a, d.part, d.err)
			if end {
				if failed != nil && err != nil {
					return failed
				}
				return err
			}
		case fl := <-a.fails:
			for _, id := range fl.ids {
				if err := f.failed(ctx, a, id, fl.err); err != nil {
					return err
				}
			}
		case t := <-a.takeovers:
			if err := a.takeover(t); err != nil {
				return err
			}
		case r := <-a.sb.outcomes():
			a.sb.ended(r)
		case <-ticker.C:
			if err := f.tick(ctx, a); err != nil {
				return err
			}
			a.tick()
		case <-f.restarted():
			f.onRestarted(a)
		case ev := <-a.snaps:
			a.onSnapshot(ev)
		case id := <-a.fins:
			a.onFinished(id)
		case <-a.kills.C:
			a.kills.fired()
			a.injectKill()
		case r := <-a.e.cfg.Savepoints:
			a.requestSavepoint(r)
		case r := <-a.e.cfg.Rescales:
			a.requestRescale(r)
		case r := <-a.reshapes:
			a.reshapeDone(r)
		case err := <-a.committed:
			return a.stoppedAfterSavepoint(err)
		}
		if a.stopAt != 0 && a.committed == nil {
			a.awaitCommits(ctx)
		}
		if rs := a.rescale; rs != nil && rs.completed && !rs.started {
			a.startReshape(ctx, a.reshapes)
		}
		if a.failure != nil && failed == nil {
			failed = a.failure
			if !f.fail(a, failed) {
				return failed
			}
		}
	}
}

// stop ends the attempt: it cancels its context and waits for every
// executor's Run and every standby being started.
func (a *attemptState) stop(cancel context.CancelFunc) {
	cancel()
	close(a.stopped)
	a.runs.Wait()
	a.sb.wait()
	a.kills.stop()
}

// run runs x on a goroutine until its Run returns, which the loop learns
// as the end of part.
func (a *attemptState) run(ctx context.Context, part int, x Executor) {
	a.runs.Add(1)
	go func() {
		defer a.runs.Done()
		err := x.Run(ctx)
		select {
		case a.ends <- ended{part, err}:
		case <-a.stopped:
		}
	}()
}

// deploy starts an attempt, or a part of one, by spec: on the
// configured deployer, or in this process.
func (a *attemptState) deploy(ctx context.Context, spec AttemptSpec) (Executor, error) {
	if d := a.e.cfg.Deploy; d != nil {
		return d(ctx, spec)
	}
	return a.e.localDeployer(ctx, spec)
}

// arm arms the attempt's next injected failure (Injector.arm); restored
// says whether what runs restored a checkpoint.
func (a *attemptState) arm(restored bool) {
	a.kills.arm(restored, a.e.checkpoints())
}

// injectKill injects the armed random-moment failure: one time in three
// into a random active standby, if any runs, else into a random subtask.
func (a *attemptState) injectKill() {
	if a.sb.killRandom() {
		a.arm(a.e.latest != nil) // no recovery follows to arm the next
		return
	}
	a.killRandom()
}

// spec returns the attempt's runtime options and its callbacks, which
// hand snapshots and finished subtasks to the loop until ctx ends.
func (a *attemptState) spec(ctx context.Context, restore *store.Metadata) AttemptSpec {
	e := a.e
	spec := AttemptSpec{Options: e.cfg.Runtime, Restore: restore, Plan: e.cfg.Plan}
	opts := &spec.Options
	if restore != nil {
		opts.Restored = int64(restore.ID)
	}
	opts.Attempt = len(e.report.Recoveries)
	spec.Adopt = e.cfg.Adopt != nil && opts.Attempt == 0
	switch e.cfg.Mode {
	case ExactlyOnce:
		opts.Checkpoint = task.Aligned
		opts.AlignedTimeout = e.cfg.AlignedTimeout
		if e.cfg.Unaligned {
			opts.Checkpoint = task.Unaligned
		}
	case AtLeastOnce:
		opts.Checkpoint = task.AtLeastOnce
	case AtMostOnce:
		opts.TrackPositions = true
		opts.Positions = e.positions
		opts.GapMarks = e.gaps
	}
	if opts.Checkpoint != task.NoCheckpoints {
		spec.OnSnapshot = func(s Snapshot) {
			select {
			case a.snaps <- s:
			case <-ctx.Done():
			}
		}
		spec.OnFinished = func(id dataflow.SubtaskID) {
			select {
			case a.fins <- id:
			case <-ctx.Done():
			}
		}
	}
	if in := e.cfg.Failures; in != nil {
		opts.Inject = in.hook
	}
	return spec
}
