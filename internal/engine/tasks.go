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

// subtaskFailover runs the plan with upstream backup and restarts failed
// subtasks alone (with their cone), by the restart strategy, from the
// latest completed checkpoint, while every other subtask runs on: running
// senders replay their retained output to the restarted ones, and
// running receivers drop the records they already have by sequence
// number. In-flight checkpoints are aborted at a failure and triggering
// pauses until the restarted subtasks run. A sender that lost its backup
// (task.ErrBackupLost) fails the attempt, and the job falls back to a
// global rollback, as does a record that reached a subtask that does not
// own its key group (task.ErrKeyGroupNotOwned).
type subtaskFailover struct {
	plan      *plan.Plan
	restore   *store.Metadata // the checkpoint the attempt started from
	local     *task.Runtime   // nil on a cluster
	restarter SubtaskRestarter

	pending   map[dataflow.SubtaskID]bool // the subtasks the next restart restarts
	lastCause string                      // of the latest failure, whose subtasks may still come
	due       time.Time                   // when the next restart is due
	ready     <-chan struct{}             // the restarted subtasks asked for their replays
	// cone is the subtasks that restarted alone since a.restarted; nil
	// once their recovery was measured, or when the attempt restarted as
	// a whole.
	cone []dataflow.SubtaskID
}

func newSubtaskFailover(p *plan.Plan) *subtaskFailover {
	return &subtaskFailover{plan: p, pending: map[dataflow.SubtaskID]bool{}}
}

// restarts returns id's cone (Cone).
func (f *subtaskFailover) restarts(id dataflow.SubtaskID) []dataflow.SubtaskID {
	return Cone(f.plan, id)
}

// failureHost is the task.Host of an attempt under subtask failover: it
// hands the failures of single subtasks, and those active standbys took
// over, to the attempt's loop until done is closed (the attempt's end).
// Snapshots and finished subtasks reach the loop through AttemptSpec's
// callbacks, once the executor stored the snapshots.
type failureHost struct {
	task.NopHost
	a    *attemptState
	done <-chan struct{}
}

func (h failureHost) Failed(id dataflow.SubtaskID, err error) {
	h.FailedTogether([]dataflow.SubtaskID{id}, err)
}

// FailedTogether hands the failures of ids, of one cause, to the loop in
// one message, which restarts them as one recovery (FailedTogether).
func (h failureHost) FailedTogether(ids []dataflow.SubtaskID, err error) {
	select {
	case h.a.fails <- failure{ids, err}:
	case <-h.done:
	}
}

func (h failureHost) TakenOver(id dataflow.SubtaskID, err error, at time.Time) {
	select {
	case h.a.takeovers <- takeover{id, err, at}:
	case <-h.done:
	}
}

func (f *subtaskFailover) start(ctx context.Context, a *attemptState, restore *store.Metadata) (Executor, error) {
	e := a.e
	f.restore = restore
	spec := a.spec(ctx, restore)
	opts := &spec.Options
	opts.UpstreamBackup = true
	opts.RetainLimit = e.cfg.RetainLimit
	if opts.RetainLimit == 0 {
		opts.RetainLimit = DefaultRetainLimit
	}
	opts.Log = e.cfg.Log
	opts.Host = failureHost{a: a, done: ctx.Done()}
	if e.cfg.ActiveStandby {
		e.logStandbys()
		opts.ActiveStandby = true
	}
	x, err := a.deploy(ctx, spec)
	if err != nil {
		return nil, err
	}
	switch l := x.(type) {
	case *localExec:
		f.local, f.restarter = l.Runtime, localRestarter{l.Runtime, e.cfg.Store, e.cfg.Plan, e.cfg.AllowNonRestoredState}
	case SubtaskRestarter:
		f.restarter = l
	default:
		return nil, errors.New("engine: the deployer's executor cannot restart single subtasks")
	}
	if e.cfg.ActiveStandby {
		a.sb = newStandbys(e, f.local, x)
	}
	a.arm(restore != nil)
	a.run(ctx, 0, x)
	a.pending = f.describe
	return x, nil
}

// ended ends the attempt with its executor's Run: its subtasks' failures
// reach failed, so an error here is one they cannot restart from.
func (f *subtaskFailover) ended(_ context.Context, a *attemptState, _ int, err error) (bool, error) {
	a.noteRecovery()
	switch {
	case errors.Is(err, task.ErrBackupLost):
		a.e.cfg.Log(fmt.Sprintf("upstream backup lost (%v): falling back to a global rollback", err))
	case errors.Is(err, task.ErrKeyGroupNotOwned):
		a.e.cfg.Log(fmt.Sprintf("%v: falling back to a global rollback", err))
	}
	return true, err
}

// failed stops id's cone and schedules its restart after the restart
// strategy's delay. Another subtask failing for the same cause (a lost
// worker's) joins the restart under way as one recovery.
func (f *subtaskFailover) failed(_ context.Context, a *attemptState, id dataflow.SubtaskID, cause error) error {
	if _, corrupt := CorruptCheckpoint(cause); corrupt {
		// The checkpoint a restart restores failed verification: the job
		// falls back to an older one, which only a global restart
		// restores.
		return cause
	}
	if err := a.afterRelease(cause); err != nil {
		return err
	}
	e := a.e
	if f.restore != nil && e.latest != nil && e.latest.ID == f.restore.ID {
		// The attempt restored its checkpoint globally: its channels
		// count records from 0, not from that checkpoint's counts, so
		// a subtask restored from it alone would not line up with
		// its running senders and receivers.
		return fmt.Errorf("%w (before this attempt's first checkpoint, so the job restarts as a whole)", cause)
	}
	now := time.Now()
	restart := f.restarts(id)
	var stop []dataflow.SubtaskID
	added := 0
	for _, r := range restart {
		if !f.pending[r] && r != id {
			stop = append(stop, r)
		}
		if !f.pending[r] {
			added++
		}
		f.pending[r] = true
	}
	f.restarter.Stop(stop)
	if len(f.pending) > added && cause.Error() == f.lastCause {
		// Another subtask of the same failure (a lost worker's): it
		// restarts with the others, as one recovery.
		recs := e.report.Recoveries
		recs[len(recs)-1].Restarted += added
		f.cone = append(f.cone, restart...)
		e.publish()
		return nil
	}
	f.lastCause = cause.Error()
	delay, err := e.partialFailure(cause, len(restart), now)
	if err != nil {
		return err
	}
	e.cfg.Log(fmt.Sprintf("failure %d: %v; restarting %d of %d subtasks in %v from %s; the others run on",
		len(e.report.Recoveries), cause, len(restart), e.cfg.Plan.Subtasks(), delay, e.describeRestore()))
	if at := now.Add(delay); at.After(f.due) {
		f.due = at
	}
	f.cone = restart
	a.restartLater(restart, now, f.due)
	return nil
}

// tick starts the active standbys that are missing while no restart is
// under way, and restarts the pending subtasks once their restart is due
// and the previous restart is done: until its subtasks run again, a
// Stop of them (a later failure's cone) may have reached the
// incarnation that was ending, not the new one.
func (f *subtaskFailover) tick(ctx context.Context, a *attemptState) error {
	if a.sb != nil && len(f.pending) == 0 && f.ready == nil && f.local != nil {
		a.sb.start(ctx) // a cluster's executor places standbys itself
	}
	if len(f.pending) == 0 || f.ready != nil || time.Now().Before(f.due) {
		return nil
	}
	ready, err := a.e.restartTasks(ctx, f.restarter, f.pending)
	if err != nil {
		return err
	}
	f.ready = ready
	clear(f.pending)
	a.stall.progressed()
	a.arm(a.e.latest != nil)
	return nil
}

func (f *subtaskFailover) restarted() <-chan struct{} { return f.ready }

// onRestarted resumes checkpoints once the restarted subtasks asked for
// their replays, unless another restart is pending.
func (f *subtaskFailover) onRestarted(a *attemptState) {
	f.ready = nil
	if f.local == nil {
		f.noteRemoteRecovery(a)
	}
	if len(f.pending) == 0 {
		a.coord.Resume()
	}
}

// recovered measures the recovery of the cone in this process
// (coneRecovered); on a cluster that of a cone ends when it asked for
// its replays (onRestarted). An attempt restarted as a whole recovered
// at its first output.
func (f *subtaskFailover) recovered(a *attemptState) (time.Duration, bool) {
	if f.cone == nil {
		return firstOutputSince(a.rt, a.restarted)
	}
	if f.local == nil {
		return 0, false
	}
	took, ok := coneRecovered(Local{f.local}, f.plan, f.cone, a.restarted)
	if ok {
		f.cone = nil
	}
	return took, ok
}

// fail returns at once: the loop's end cancels the attempt.
func (f *subtaskFailover) fail(*attemptState, error) bool { return false }

// describe says what the restarts wait for, for the stall report.
func (f *subtaskFailover) describe() string {
	var parts []string
	if len(f.pending) > 0 {
		ids := make([]string, 0, len(f.pending))
		for id := range f.pending {
			ids = append(ids, id.String())
		}
		slices.Sort(ids)
		parts = append(parts, fmt.Sprintf("restart of %s due in %v", strings.Join(ids, ", "), time.Until(f.due).Round(time.Millisecond)))
	}
	if f.ready != nil {
		parts = append(parts, "waiting for restarted subtasks to restore their state and ask for their replays (checkpoints resume then)")
	}
	return strings.Join(parts, "; ")
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
	plan  *plan.Plan
	drop  bool // Config.AllowNonRestoredState
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
		if state, err = ReadState(ctx, l.store, m, l.plan, func(id dataflow.SubtaskID) bool { return slices.Contains(ids, id) }, l.drop); err != nil {
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

// noteRemoteRecovery measures the recovery of subtasks restarted alone
// on a cluster: from the failure to when every restarted subtask
// restored its state and asked for its replays. (The cluster's metrics
// do not tell when a restarted sink wrote its first record.)
func (f *subtaskFailover) noteRemoteRecovery(a *attemptState) {
	if f.cone == nil || a.restarted.IsZero() {
		return
	}
	recs := a.e.report.Recoveries
	recs[len(recs)-1].Duration = time.Since(a.restarted)
	a.restarted, f.cone = time.Time{}, nil
	a.e.publish()
}

// coneRecovered measures the recovery of the subtasks of cone, restarted
// alone in rt at restarted: from then to the first record a restarted
// sink wrote, or, when no sink restarted, to when every restarted
// subtask ran again. It reports false until then.
func coneRecovered(rt Local, p *plan.Plan, cone []dataflow.SubtaskID, restarted time.Time) (time.Duration, bool) {
	var first, started int64
	sinks := false
	for _, id := range cone {
		m := rt.Metrics(id.Vertex, id.Subtask)
		if p.Vertices[id.Vertex].Tail().Kind == plan.Sink {
			sinks = true
			if t := m.FirstWrite.Load(); t > restarted.UnixNano() && (first == 0 || t < first) {
				first = t
			}
		}
		t := m.Started.Load()
		if t <= restarted.UnixNano() {
			return 0, false // not running again yet
		}
		started = max(started, t)
	}
	end := started
	if sinks {
		if first == 0 {
			return 0, false
		}
		end = first
	}
	return time.Unix(0, end).Sub(restarted), true
}
