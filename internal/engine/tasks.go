package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// DefaultRetainLimit bounds the output each subtask retains for upstream
// backup when Config.RetainLimit is 0.
const DefaultRetainLimit = 256 << 20

// taskFailover reports whether a failure restarts single subtasks, with
// upstream backup: fine-grained failover with aligned exactly-once or
// at-least-once checkpoints, in this process or on a cluster whose
// executors can (Config.SubtaskRestarts). Unaligned checkpoints store
// in-flight records with the snapshot, which replay by sequence number
// does not cover; they restart pipelined regions.
func (e *engine) taskFailover() bool {
	return e.fineGrained() && (e.cfg.Deploy == nil || e.cfg.SubtaskRestarts) && !e.cfg.Unaligned && e.cfg.AlignedTimeout == 0
}

// Cone returns the subtasks that restart when id fails: id, and when its
// output cannot be regenerated record for record (task.ReplayDeterministic,
// with the consumption order logged) every subtask downstream of it,
// whose input would differ from what they consumed.
func Cone(p *plan.Plan, id dataflow.SubtaskID) []dataflow.SubtaskID {
	out := []dataflow.SubtaskID{id}
	if task.ReplayDeterministic(p.Vertices[id.Vertex], true) {
		return out
	}
	seen := map[dataflow.SubtaskID]bool{id: true}
	for i := 0; i < len(out); i++ {
		cur := out[i]
		for _, e := range p.Vertices[cur.Vertex].Outputs {
			targets := []int{cur.Subtask}
			if e.Partitioning != plan.Forward {
				targets = targets[:0]
				for j := range e.Target.Parallelism {
					targets = append(targets, j)
				}
			}
			for _, j := range targets {
				t := dataflow.SubtaskID{Vertex: e.Target.ID, Subtask: j}
				if !seen[t] {
					seen[t] = true
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// attemptTasks runs the plan in this process with upstream backup and
// restarts failed subtasks alone (with their cone), by the restart
// strategy, from the latest completed checkpoint, while every other
// subtask runs on: running senders replay their retained output to the
// restarted ones, and running receivers drop the records they already
// have by sequence number. In-flight checkpoints are aborted at a failure
// and triggering pauses until the restarted subtasks run. A sender that
// lost its backup (task.ErrBackupLost) fails the attempt, and the job
// falls back to a global rollback, as does a record that reached a
// subtask that does not own its key group (task.ErrKeyGroupNotOwned).
func (e *engine) attemptTasks(ctx context.Context, restore *store.Metadata) error {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	snaps := make(chan Snapshot)
	fins := make(chan dataflow.SubtaskID)
	type failure struct {
		id  dataflow.SubtaskID
		err error
	}
	fails := make(chan failure)
	spec := e.spec(actx, restore, snaps, fins)
	opts := &spec.Options
	opts.UpstreamBackup = true
	opts.RetainLimit = e.cfg.RetainLimit
	if opts.RetainLimit == 0 {
		opts.RetainLimit = DefaultRetainLimit
	}
	opts.Log = e.cfg.Log
	opts.OnFailed = func(id dataflow.SubtaskID, err error) {
		select {
		case fails <- failure{id, err}:
		case <-actx.Done():
		}
	}
	takeovers := make(chan takeover)
	if e.cfg.ActiveStandby {
		e.logStandbys()
		opts.ActiveStandby = true
		opts.OnFailover = func(id dataflow.SubtaskID, err error, at time.Time) {
			select {
			case takeovers <- takeover{id, err, at}:
			case <-actx.Done():
			}
		}
	}
	deploy := e.cfg.Deploy
	if deploy == nil {
		deploy = e.localDeployer
	}
	x, err := deploy(actx, spec)
	if err != nil {
		return err
	}
	var rt *task.Runtime // nil on a cluster
	var restarter SubtaskRestarter
	switch l := x.(type) {
	case Local:
		rt, restarter = l.Runtime, localRestarter{l.Runtime, e.cfg.Store}
	case SubtaskRestarter:
		restarter = l
	default:
		return errors.New("engine: the deployer's executor cannot restart single subtasks")
	}
	a, err := e.newAttemptState(x, true)
	if err != nil {
		return err
	}
	kills := killClock{in: e.cfg.Failures}
	defer kills.stop()
	kills.arm(restore != nil, true)
	done := make(chan error, 1)
	go func() { done <- x.Run(actx) }()
	ticker := time.NewTicker(e.cfg.Tick)
	defer ticker.Stop()
	sb := newStandbys(e, rt, x)
	running := true // x's Run has not returned yet
	defer func() {
		cancel()
		if running {
			<-done
		}
		sb.wait()
	}()
	pending := map[dataflow.SubtaskID]bool{}
	lastCause := "" // of the latest failure, whose subtasks may still come
	var restartAt time.Time
	var ready <-chan struct{} // the restarted subtasks asked for their replays
	a.pending = func() string {
		var parts []string
		if len(pending) > 0 {
			ids := make([]string, 0, len(pending))
			for id := range pending {
				ids = append(ids, id.String())
			}
			slices.Sort(ids)
			parts = append(parts, fmt.Sprintf("restart of %s due in %v", strings.Join(ids, ", "), time.Until(restartAt).Round(time.Millisecond)))
		}
		if ready != nil {
			parts = append(parts, "waiting for restarted subtasks to restore their state and ask for their replays (checkpoints resume then)")
		}
		return strings.Join(parts, "; ")
	}
	for {
		select {
		case err := <-done:
			running = false
			a.noteRecovery()
			switch {
			case errors.Is(err, task.ErrBackupLost):
				e.cfg.Log(fmt.Sprintf("upstream backup lost (%v): falling back to a global rollback", err))
			case errors.Is(err, task.ErrKeyGroupNotOwned):
				e.cfg.Log(fmt.Sprintf("%v: falling back to a global rollback", err))
			}
			return err
		case f := <-fails:
			if err := a.afterRelease(f.err); err != nil {
				return err
			}
			if restore != nil && e.latest != nil && e.latest.ID == restore.ID {
				// The attempt restored its checkpoint globally: its channels
				// count records from 0, not from that checkpoint's counts, so
				// a subtask restored from it alone would not line up with
				// its running senders and receivers.
				return fmt.Errorf("%w (before this attempt's first checkpoint, so the job restarts as a whole)", f.err)
			}
			now := time.Now()
			restart := Cone(e.cfg.Plan, f.id)
			var stop []dataflow.SubtaskID
			added := 0
			for _, id := range restart {
				if !pending[id] && id != f.id {
					stop = append(stop, id)
				}
				if !pending[id] {
					added++
				}
				pending[id] = true
			}
			restarter.Stop(stop)
			if len(pending) > added && f.err.Error() == lastCause {
				// Another subtask of the same failure (a lost worker's):
				// it restarts with the others, as one recovery.
				recs := e.report.Recoveries
				recs[len(recs)-1].Restarted += added
				a.cone = append(a.cone, restart...)
				e.publish()
				continue
			}
			lastCause = f.err.Error()
			delay, err := e.partialFailure(f.err, len(restart), now)
			if err != nil {
				return err
			}
			e.cfg.Log(fmt.Sprintf("failure %d: %v; restarting %d of %d subtasks in %v from %s; the others run on",
				len(e.report.Recoveries), f.err, len(restart), e.cfg.Plan.Subtasks(), delay, e.describeRestore()))
			a.act(a.coord.JobFailed())
			for _, id := range restart {
				delete(a.finished, id)
			}
			a.allDone = false
			a.restarted, a.cone = now, restart
			if at := now.Add(delay); at.After(restartAt) {
				restartAt = at
			}
			a.restartDue = restartAt
		case t := <-takeovers:
			if err := a.afterRelease(t.err); err != nil {
				return err
			}
			if err := e.takenOver(a, t); err != nil {
				return err
			}
			a.stall.progressed()
			kills.arm(e.latest != nil, true)
		case r := <-sb.done:
			sb.ended(r)
		case <-ticker.C:
			if e.cfg.ActiveStandby && len(pending) == 0 && ready == nil && rt != nil {
				sb.start(actx) // a cluster's executor places standbys itself
			}
			// A restart waits for the previous one: until its subtasks run
			// again, a Stop of them (a later failure's cone) may have
			// reached the incarnation that was ending, not the new one.
			if len(pending) > 0 && ready == nil && !time.Now().Before(restartAt) {
				if ready, err = e.restartTasks(actx, restarter, pending); err != nil {
					return err
				}
				clear(pending)
				a.stall.progressed()
				kills.arm(e.latest != nil, true)
			}
			a.tick()
		case <-ready:
			ready = nil
			if rt == nil {
				a.noteRemoteConeRecovery()
			}
			if len(pending) == 0 {
				a.coord.Resume()
			}
		case ev := <-snaps:
			a.onSnapshot(ev)
		case id := <-fins:
			a.onFinished(id)
		case <-kills.C:
			kills.fired()
			if sb.killRandom() {
				kills.arm(e.latest != nil, true) // no recovery follows to arm the next
			} else {
				a.killRandom()
			}
		}
		if a.failure != nil {
			return a.failure
		}
	}
}

// restartTasks restarts the pending subtasks from the latest completed
// checkpoint (empty when there is none). The channel it returns is closed
// once they asked for their replays; checkpoints resume then.
func (e *engine) restartTasks(ctx context.Context, r SubtaskRestarter, pending map[dataflow.SubtaskID]bool) (<-chan struct{}, error) {
	m, err := e.restoreState(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]dataflow.SubtaskID, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b dataflow.SubtaskID) int {
		if a.Vertex != b.Vertex {
			return a.Vertex - b.Vertex
		}
		return a.Subtask - b.Subtask
	})
	// Stop them again: one stopped while an earlier restart brought it
	// back runs a new incarnation the first Stop missed, and the restart
	// would wait for it to stop. Failed and stopped subtasks are skipped.
	r.Stop(ids)
	return r.Restart(ctx, ids, m, len(e.report.Recoveries))
}

// localRestarter restarts single subtasks of an attempt in this process,
// reading their state from the job's store.
type localRestarter struct {
	rt    subtaskRuntime
	store *store.Checkpoints
}

// subtaskRuntime is the part of task.Runtime a localRestarter uses.
type subtaskRuntime interface {
	Stop(ids []dataflow.SubtaskID)
	Restart(ctx context.Context, ids []dataflow.SubtaskID, state map[dataflow.SubtaskID][]byte, restored int64, attempt int) <-chan struct{}
}

func (l localRestarter) Stop(ids []dataflow.SubtaskID) { l.rt.Stop(ids) }

func (l localRestarter) Restart(ctx context.Context, ids []dataflow.SubtaskID, m *store.Metadata, attempt int) (<-chan struct{}, error) {
	state := map[dataflow.SubtaskID][]byte{}
	var restored int64
	if m != nil {
		restored = int64(m.ID)
		var err error
		if state, err = ReadState(ctx, l.store, m, func(id dataflow.SubtaskID) bool { return slices.Contains(ids, id) }); err != nil {
			return nil, &fatalError{err}
		}
	}
	// The restart waits for the subtasks to stop, and a stopping subtask
	// may wait for the engine to take its snapshot or its end of input:
	// the engine's loop must go on meanwhile. The goroutine ends once the
	// restarted subtasks asked for their replays, or stopped, or ctx ended.
	ready := make(chan struct{})
	go func() {
		defer close(ready)
		<-l.rt.Restart(ctx, ids, state, restored, attempt)
	}()
	return ready, nil
}

// noteRemoteConeRecovery measures the recovery of subtasks restarted
// alone on a cluster: from the failure to when every restarted subtask
// restored its state and asked for its replays. (The cluster's metrics
// do not tell when a restarted sink wrote its first record.)
func (a *attemptState) noteRemoteConeRecovery() {
	if a.cone == nil || a.restarted.IsZero() {
		return
	}
	recs := a.e.report.Recoveries
	recs[len(recs)-1].Duration = time.Since(a.restarted)
	a.restarted, a.cone = time.Time{}, nil
	a.e.publish()
}

// noteConeRecovery measures the recovery of subtasks restarted alone:
// from the failure to the first record a restarted sink wrote, or, when
// no sink restarted, to when every restarted subtask ran again.
func (a *attemptState) noteConeRecovery() {
	rt := a.rt.(Local)
	var first, started int64
	sinks := false
	for _, id := range a.cone {
		m := rt.Metrics(id.Vertex, id.Subtask)
		if a.e.cfg.Plan.Vertices[id.Vertex].Tail().Kind == plan.Sink {
			sinks = true
			if t := m.FirstWrite.Load(); t > a.restarted.UnixNano() && (first == 0 || t < first) {
				first = t
			}
		}
		t := m.Started.Load()
		if t <= a.restarted.UnixNano() {
			return // not running again yet
		}
		started = max(started, t)
	}
	end := started
	if sinks {
		if first == 0 {
			return
		}
		end = first
	}
	recs := a.e.report.Recoveries
	recs[len(recs)-1].Duration = time.Unix(0, end).Sub(a.restarted)
	a.restarted, a.cone = time.Time{}, nil
	a.e.publish()
}
