package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/task"
)

// This file is the engine's side of active standby (task/standby.go):
// recording a takeover, and starting new standbys for the subtasks that
// lost theirs, from the latest completed checkpoint.

// takeover is a failure an active standby took over.
type takeover struct {
	id     dataflow.SubtaskID
	err    error
	failed time.Time
}

// takeover handles a failure an active standby took over.
func (a *attemptState) takeover(t takeover) error {
	if err := a.afterRelease(t.err); err != nil {
		return err
	}
	if err := a.e.takenOver(a, t); err != nil {
		return err
	}
	a.stall.progressed()
	a.arm(a.e.latest != nil)
	return nil
}

// takenOver records t as a recovery in which nothing restarted. The
// checkpoints in flight are aborted: the failed primary may have
// consumed a checkpoint's last barrier without taking its snapshot, and
// its standby, which only forwards barriers, would never acknowledge it.
func (e *engine) takenOver(a *attemptState, t takeover) error {
	if _, err := e.partialFailure(t.err, 0, t.failed); err != nil {
		return err
	}
	recs := e.report.Recoveries
	rec := &recs[len(recs)-1]
	rec.Takeover = true
	rec.Duration = time.Since(t.failed)
	e.publish()
	e.cfg.Log(fmt.Sprintf("failure %d: %v; the active standby of subtask %s took its place after %v; nothing restarts",
		len(recs), t.err, t.id, rec.Duration.Round(time.Microsecond)))
	a.act(a.coord.JobFailed())
	a.coord.Resume()
	return nil
}

// logStandbys says which tasks have active standbys, and, when none can,
// why: a job run with standbys must not silently run without.
func (e *engine) logStandbys() {
	var names []string
	n := 0
	for _, v := range e.cfg.Plan.Vertices {
		if task.CanHaveStandby(v) {
			names = append(names, v.Name())
			n += v.Parallelism
		}
	}
	if n == 0 {
		e.cfg.Log("active standby: no task can have one (each is a source, ends in a sink, or is not deterministic; --chaining=false separates sinks); failures restart tasks alone")
		return
	}
	e.cfg.Log(fmt.Sprintf("active standby: %d of %d subtasks have one, of tasks %s", n, e.cfg.Plan.Subtasks(), strings.Join(names, ", ")))
}

// standbys starts new standbys, each on a goroutine it waits for. A nil
// *standbys (no active standbys) starts and kills none.
type standbys struct {
	e        *engine
	rt       *task.Runtime // nil on a cluster
	killer   StandbyKiller // the runtime, or a cluster's executor
	starting map[dataflow.SubtaskID]bool
	failed   map[dataflow.SubtaskID]int64 // the checkpoint each last failed to start from
	done     chan started
	wg       sync.WaitGroup
}

func newStandbys(e *engine, rt *task.Runtime, x Executor) *standbys {
	sb := &standbys{e: e, rt: rt, starting: map[dataflow.SubtaskID]bool{}, failed: map[dataflow.SubtaskID]int64{}, done: make(chan started)}
	if rt != nil {
		sb.killer = rt
	} else if k, ok := x.(StandbyKiller); ok {
		sb.killer = k
	}
	return sb
}

// StandbyKiller is an executor whose active standbys can be killed, for
// failure injection: a runtime's, or a cluster's, which places them
// itself.
type StandbyKiller interface {
	// Standbys returns the subtasks whose standby runs.
	Standbys() []dataflow.SubtaskID
	// KillStandby stops the standby of subtask id with err; the subtask
	// runs on.
	KillStandby(id dataflow.SubtaskID, err error)
}

// start starts a standby for every subtask that can have one and has none,
// from the latest completed checkpoint; one that could not start from it
// (its log no longer reaches back to it) is tried again from the next one,
// not at every tick.
func (sb *standbys) start(ctx context.Context) {
	m := sb.e.latest
	if m != nil && Rescaled(m, sb.e.cfg.Plan) {
		// Restored at another parallelism: the primaries' channels and
		// input logs start afresh, so their standbys start from this
		// run's first checkpoint.
		return
	}
	var latest int64
	if m != nil {
		latest = int64(m.ID)
	}
	for _, id := range sb.rt.MissingStandbys() {
		if last, ok := sb.failed[id]; sb.starting[id] || ok && last == latest {
			continue
		}
		sb.starting[id] = true
		sb.wg.Add(1)
		go func() {
			defer sb.wg.Done()
			var state []byte
			var restored int64
			if m != nil {
				restored = int64(m.ID)
				st, err := ReadState(ctx, sb.e.cfg.Store, m, sb.e.cfg.Plan, func(s dataflow.SubtaskID) bool { return s == id }, sb.e.cfg.AllowNonRestoredState)
				if err != nil {
					sb.e.cfg.Log(fmt.Sprintf("starting a standby of subtask %s: %v", id, err))
				}
				state = st[id]
			}
			ok := false
			if state != nil || restored == 0 { // else not read: try again later
				if err := sb.rt.StartStandby(id, state, restored); err == nil {
					ok = true
					sb.e.cfg.Log(fmt.Sprintf("subtask %s has an active standby again, from checkpoint %d", id, restored))
				}
			}
			select {
			case sb.done <- started{id, restored, ok}:
			case <-ctx.Done():
			}
		}()
	}
}

// started is the outcome of starting a standby from checkpoint from.
type started struct {
	id   dataflow.SubtaskID
	from int64
	ok   bool
}

// outcomes returns the channel of the starts' outcomes, which the loop
// hands to ended (nil: none come).
func (sb *standbys) outcomes() <-chan started {
	if sb == nil {
		return nil
	}
	return sb.done
}

// ended records a start's outcome.
func (sb *standbys) ended(r started) {
	delete(sb.starting, r.id)
	if r.ok {
		delete(sb.failed, r.id)
	} else {
		sb.failed[r.id] = r.from
	}
}

// killRandom kills a random standby instead of a subtask, one time in
// three, when failures are injected and standbys run; it reports whether
// it did.
func (sb *standbys) killRandom() bool {
	if sb == nil || sb.killer == nil {
		return false
	}
	in := sb.e.cfg.Failures
	ids := sb.killer.Standbys()
	if in == nil || len(ids) == 0 || in.pick(3) != 0 || !in.fireRandom() {
		return false
	}
	victim := ids[in.pick(len(ids))]
	sb.killer.KillStandby(victim, &task.InjectedError{Point: "standby-at-a-random-moment", Subtask: victim})
	return true
}

// wait waits for the standbys being started.
func (sb *standbys) wait() {
	if sb != nil {
		sb.wg.Wait()
	}
}
