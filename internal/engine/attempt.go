package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weir-stream/weir/internal/checkpoint"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// attemptState is the bookkeeping of one attempt's event loop (loop.go):
// its checkpoints, finished subtasks and restarts.
type attemptState struct {
	e         *engine
	failover  failover
	rt        Executor // the executor of the attempt, as the loop drives it
	coord     *checkpoint.Coordinator
	tasks     []dataflow.SubtaskID
	finished  map[dataflow.SubtaskID]bool
	acked     map[int64]map[dataflow.SubtaskID]bool   // in-flight checkpoints
	counts    map[int64]map[dataflow.Channel][2]int64 // per checkpoint: sent, received
	final     int64                                   // checkpoints above it were triggered after all tasks finished
	allDone   bool
	wantFinal bool
	// stopAt is the savepoint's checkpoint after whose completion the job
	// stops (0: none asked to).
	stopAt int64
	// committed receives the outcome of the wait for the sinks' commits
	// of checkpoint stopAt (nil until the wait starts; awaitCommits).
	committed chan error
	// restarted is when the restart under way began, for its recovery
	// time (zero: none under way); the failover strategy tells when it
	// ended.
	restarted time.Time
	failure   error // set when checkpoint failures exceed the tolerance, or the attempt stalled
	stall     *stallWatch
	// pending, if set, describes what the engine itself waits for (a
	// restart), for the stall report.
	pending func() string
	// released is the final checkpoint after which the finished subtasks
	// were released (0: none yet). They exit: none restarts alone after
	// it (afterRelease).
	released int64
	// restartDue is when the latest restart the engine scheduled is due:
	// until then the attempt waits by design, not stalled.
	restartDue time.Time
	// catchingUp notes, per subtask restarted alone, when it first
	// declined a checkpoint for not having caught up since the latest
	// completed one (catchup.go).
	catchingUp map[dataflow.SubtaskID]time.Time

	// The loop's inputs, each read only by the loop.
	snaps     chan Snapshot           // snapshots taken and stored
	fins      chan dataflow.SubtaskID // subtasks that finished their input
	ends      chan ended              // executors whose Run returned
	fails     chan failure            // subtasks that failed alone
	takeovers chan takeover           // failures active standbys took over
	stopped   chan struct{}           // closed once the loop stopped reading
	runs      sync.WaitGroup          // the executors' Runs
	kills     killClock
	sb        *standbys // nil without active standbys

	// rescale is the live rescale under way (reshape.go); reshapes
	// receives the start of its new subtasks.
	rescale  *pendingRescale
	reshapes chan reshaped
}

// tick advances the attempt's clock: recovery time, the coordinator's
// timers and triggers, and a final checkpoint that waits for its turn.
func (a *attemptState) tick() {
	a.noteRecovery()
	if a.coord != nil && a.stopAt == 0 && !a.triggersHeld() { // no checkpoint after the stop's savepoint
		a.act(a.coord.Tick())
		if a.wantFinal {
			a.triggerFinal()
		}
		a.triggerSavepoint()
	}
	a.checkStall()
}

// killRandom fails a random subtask, if the injector still has a failure
// to inject; a kill that waits for a completed checkpoint (NewInjectorAt)
// tries again a tick later while there is none.
func (a *attemptState) killRandom() {
	in := a.e.cfg.Failures
	if in.waitsForCheckpoint() && a.e.checkpoints() && a.e.latest == nil {
		a.kills.retry(a.e.cfg.Tick)
		return
	}
	if in.fireRandom() {
		victim := a.tasks[in.pick(len(a.tasks))]
		a.rt.Kill(victim, &task.InjectedError{Point: "at-a-random-moment", Subtask: victim})
	}
}

func (e *engine) coordinatorConfig(tasks []dataflow.SubtaskID) checkpoint.Config {
	ticks := func(d time.Duration) int64 {
		if d <= 0 {
			return 0
		}
		return max(1, int64(d/e.cfg.Tick))
	}
	cfg := checkpoint.Config{Interval: ticks(e.cfg.Interval), MinPause: ticks(e.cfg.MinPause),
		MaxConcurrent: e.cfg.MaxConcurrent, Timeout: ticks(e.cfg.Timeout), TolerableFailures: e.cfg.Tolerable,
		FirstID: e.nextID}
	if cfg.Timeout == 0 {
		cfg.Timeout = ticks(10 * time.Minute)
	}
	for _, t := range tasks {
		cfg.Tasks = append(cfg.Tasks, t)
		if e.cfg.Plan.Vertices[t.Vertex].Head().Kind == plan.Source {
			cfg.Sources = append(cfg.Sources, t)
		}
	}
	return cfg
}

// keepPositions remembers where at-most-once sources stood, and the
// operators' gap marks.
func (e *engine) keepPositions(rt Executor) {
	if e.positions == nil {
		e.positions = map[dataflow.SubtaskID][]byte{}
	}
	for id, p := range rt.Positions() {
		e.positions[id] = p
	}
	if g, ok := rt.(GapMarker); ok {
		e.gaps = g.GapMarks()
	}
}

// noteRecovery measures the recovery time: from the failure to when the
// failover strategy says the restart under way recovered (for a whole
// attempt, the first record written after the restart).
func (a *attemptState) noteRecovery() {
	if a.restarted.IsZero() {
		return
	}
	took, ok := a.failover.recovered(a)
	if !ok {
		return
	}
	recs := a.e.report.Recoveries
	recs[len(recs)-1].Duration = took
	a.restarted = time.Time{}
	a.e.publish()
}

func (a *attemptState) onSnapshot(ev Snapshot) {
	if a.coord == nil {
		return
	}
	r := ev.Result
	id := checkpoint.ID(r.Checkpoint)
	if ev.Err != nil {
		if errors.Is(ev.Err, context.Canceled) {
			// The attempt is ending (cancelled, or stopped for a restart):
			// its checkpoints in flight end with it, failing nothing.
			return
		}
		if errors.Is(ev.Err, task.ErrCatchingUp) {
			a.act(a.coord.NotReady(id, r.Subtask, ev.Err.Error()))
			a.noteCatchingUp(r.Subtask, ev.Err)
			return
		}
		a.act(a.coord.Decline(id, r.Subtask, ev.Err.Error()))
		return
	}
	if st := a.e.stats[r.Checkpoint]; st != nil {
		st.Size += ev.Handle.Size + ev.Handle.Uploaded
		st.FullSize += ev.Handle.Size + ev.Handle.SharedBytes
		st.Alignment = max(st.Alignment, r.Alignment)
		st.Sync = max(st.Sync, r.Sync)
	}
	if m := a.acked[r.Checkpoint]; m != nil {
		m[r.Subtask] = true
		if a.e.cfg.CheckConsistency {
			cs := a.counts[r.Checkpoint]
			if cs == nil {
				cs = map[dataflow.Channel][2]int64{}
				a.counts[r.Checkpoint] = cs
			}
			for _, c := range r.Channels {
				v := cs[c.Channel]
				if c.Sender {
					v[0] = c.N
				} else {
					v[1] = c.N
				}
				cs[c.Channel] = v
			}
		}
	}
	_, acts := a.coord.Ack(id, r.Subtask, encodeHandle(ev.Handle))
	a.act(acts)
}

// finishedReporter is an executor that tells whether a subtask's running
// incarnation finished (task.Runtime.Finished).
type finishedReporter interface {
	Finished(id dataflow.SubtaskID) bool
}

// onFinished notes a finished subtask; it takes the in-flight checkpoints
// it has not acknowledged directly, and once every subtask finished the
// final checkpoint is triggered.
func (a *attemptState) onFinished(id dataflow.SubtaskID) {
	if f, ok := a.rt.(finishedReporter); ok && !f.Finished(id) {
		// The end of an incarnation that was stopped since (its cone
		// restarts): the next one has its input still to read.
		return
	}
	a.finished[id] = true
	a.stall.progressed()
	for cid, m := range a.acked {
		if !m[id] {
			a.rt.TriggerSubtask(id, cid)
		}
	}
	if len(a.finished) == len(a.tasks) && !a.allDone {
		a.allDone = true
		a.final = int64(a.coord.NextID()) - 1
		a.wantFinal = true
		a.triggerFinal()
	}
}

func (a *attemptState) triggerFinal() {
	if a.triggersHeld() {
		return // the next tick after the rescale tries
	}
	if a.stopAt != 0 {
		// No checkpoint after the stop's savepoint: it would commit
		// output that a run restored from the savepoint writes again.
		// The stop ends the run once the sinks committed the savepoint.
		a.wantFinal = false
		return
	}
	acts, err := a.coord.TriggerNow()
	if err != nil {
		return // a checkpoint is in flight; try again at the next tick
	}
	a.wantFinal = false
	a.act(acts)
}

// act carries out the coordinator's decisions.
func (a *attemptState) act(acts []checkpoint.Action) {
	e := a.e
	for _, act := range acts {
		switch x := act.(type) {
		case checkpoint.Trigger:
			id := int64(x.ID)
			e.nextID = max(e.nextID, x.ID+1)
			e.stats[id] = &CheckpointStats{ID: id, Status: "in-progress", Triggered: time.Now()}
			if e.cfg.LogCheckpoints {
				e.cfg.Log(fmt.Sprintf("checkpoint %d triggered", id))
			}
			a.acked[id] = map[dataflow.SubtaskID]bool{}
			a.rt.Trigger(id, a.rescaleTriggered(id, a.savepointTriggered(id)))
			for sid := range a.finished {
				if e.cfg.Plan.Vertices[sid.Vertex].Head().Kind != plan.Source {
					a.rt.TriggerSubtask(sid, id)
				}
			}
		case checkpoint.Persist:
			if err := a.consistent(int64(x.ID)); err != nil {
				a.failure = &fatalError{err}
				continue
			}
			err := a.persist(x)
			if err != nil {
				a.act(a.coord.StoreFailed(x.ID, err))
			} else {
				a.act(a.coord.Stored(x.ID))
			}
		case checkpoint.Complete:
			id := int64(x.ID)
			delete(a.acked, id)
			clear(a.catchingUp)
			a.stall.progressed()
			a.finish(id, "completed", "")
			a.rt.Complete(id)
			a.rescaleCompleted(id)
			if o, ok := a.rt.(CompletionObserver); ok {
				o.Completed(e.latest)
			}
			if e.cfg.LogCheckpoints {
				c := e.report.Checkpoints[len(e.report.Checkpoints)-1]
				e.cfg.Log(fmt.Sprintf("checkpoint %d completed in %v, %d bytes", id, c.Duration.Round(time.Microsecond), c.Size))
			}
			if e.cfg.Retained > 0 {
				e.retainLater() // off the loop (retain.go)
			}
			if a.allDone && id > a.final && a.rescale == nil {
				// Not while a rescale is under way: its checkpoint, and
				// the ones of its new subtasks, still need the finished
				// subtasks; a later completion releases them.
				a.rt.Release()
				a.released = id
			}
			if a.savepointCompleted(id) {
				a.stopAt = id
			}
		case checkpoint.Abort:
			id := int64(x.ID)
			delete(a.acked, id)
			reason := x.Reason.String()
			if x.Detail != "" {
				reason += ": " + x.Detail
			}
			a.finish(id, "aborted", reason)
			a.savepointAborted(id, reason)
			a.rescaleAborted(id, reason)
			a.rt.Abort(id)
			a.dropUncommitted(id)
			if x.Reason.CountsAsFailure() {
				e.cfg.Log(fmt.Sprintf("checkpoint %d failed: %s", id, reason))
				if a.allDone && id > a.final && a.failure == nil {
					// The sinks' last transactions commit with the final
					// checkpoint or not at all: finishing without it would
					// drop the output since the last completed one.
					since := "the job started"
					if last := e.report.LastCompleted(); last > 0 {
						since = fmt.Sprintf("checkpoint %d", last)
					}
					a.failure = fmt.Errorf("the final checkpoint %d failed (%s): the output written since %s cannot commit", id, reason, since)
				}
			}
		case checkpoint.Discard:
			// A late or repeated acknowledgement. Its state lives under the
			// key of the checkpoint's task, which a duplicate shares with the
			// accepted one, so it is not deleted here; an aborted
			// checkpoint's state goes with dropUncommitted.
		case checkpoint.FailJob:
			a.failure = x.Err()
		}
	}
}

func (a *attemptState) persist(p checkpoint.Persist) error {
	e := a.e
	m := store.Metadata{Job: e.cfg.Job, ID: uint64(p.ID), Fingerprint: e.cfg.Fingerprint, Run: e.cfg.Run,
		Final: a.allDone && int64(p.ID) > a.final}
	m.SetLayout(e.cfg.Layout())
	if st := e.stats[int64(p.ID)]; st != nil {
		m.TimestampMillis = st.Triggered.UnixMilli()
	}
	for t, h := range p.Handles {
		sh, err := decodeHandle(h)
		if err != nil {
			return fmt.Errorf("bad state handle of task %v: %w", t, err)
		}
		m.Tasks = append(m.Tasks, store.TaskState{Task: t, Handles: []store.Handle{sh}})
	}
	if err := e.cfg.Store.Commit(context.Background(), m); err != nil {
		if errors.Is(err, store.ErrStale) {
			return fmt.Errorf("another run committed checkpoint %d first: %w", p.ID, err)
		}
		return err
	}
	e.latest = &m
	return nil
}

// consistent checks that checkpoint id is a consistent cut: every record
// a sender had sent before its snapshot is reflected in its receiver's
// snapshot, and no other.
func (a *attemptState) consistent(id int64) error {
	cs := a.counts[id]
	delete(a.counts, id)
	if !a.e.cfg.CheckConsistency {
		return nil
	}
	for ch, v := range cs {
		if v[0] != v[1] {
			return fmt.Errorf("checkpoint %d is not consistent: on edge %d from subtask %d to %d the sender had sent %d records before its snapshot but the receiver's snapshot reflects %d",
				id, ch.Edge, ch.From, ch.To, v[0], v[1])
		}
	}
	a.e.report.ConsistencyChecked++
	return nil
}

// dropUncommitted deletes the state of aborted checkpoints up to id,
// sparing every checkpoint still in flight.
func (a *attemptState) dropUncommitted(id int64) {
	keep := id
	for inflight := range a.acked {
		if inflight <= keep {
			keep = inflight - 1
		}
	}
	if keep <= 0 {
		return
	}
	if _, err := a.e.cfg.Store.DeleteUncommitted(context.Background(), a.e.cfg.Job, uint64(keep)); err != nil {
		a.e.cfg.Log(fmt.Sprintf("deleting state of aborted checkpoints: %v", err))
	}
}

// finish records a checkpoint's end in the report.
func (a *attemptState) finish(id int64, status, reason string) {
	st := a.e.stats[id]
	if st == nil {
		st = &CheckpointStats{ID: id}
	}
	st.Status, st.Reason = status, reason
	if !st.Triggered.IsZero() {
		st.Duration = time.Since(st.Triggered)
	}
	a.e.report.add(*st)
	delete(a.e.stats, id)
	a.e.publish()
}

// afterRelease turns the failure of a subtask after the final checkpoint
// released the finished subtasks into a failure of the attempt: the
// released ones exit, so a subtask restarted alone would ask them for
// replays and wait for a final checkpoint they never take. The job
// restarts as a whole from the final checkpoint instead, where every
// task restores its final state, finishes at once, and sinks commit what
// that checkpoint holds.
func (a *attemptState) afterRelease(err error) error {
	if a.released == 0 {
		return nil
	}
	return fmt.Errorf("%w (after the final checkpoint %d released the finished subtasks, so the job restarts as a whole)", err, a.released)
}
