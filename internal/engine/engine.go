// Package engine runs a job in this process and keeps it correct through
// failures: it drives the checkpoint coordinator (a pure state machine)
// with a clock, stores snapshots, restarts failed attempts by the restart
// strategy and restores them from the latest completed checkpoint.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/weir-stream/weir/internal/checkpoint"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/recovery"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// Mode is a job's recovery semantics (package recovery defines them).
type Mode = recovery.Guarantee

const (
	// None fails the job at its first failure.
	None = recovery.None
	// ExactlyOnce restores aligned checkpoints and commits sinks with them.
	ExactlyOnce = recovery.ExactlyOnce
	// AtLeastOnce restores unaligned-barrier (non-blocking) checkpoints.
	AtLeastOnce = recovery.AtLeastOnce
	// AtMostOnce restarts with empty state and sources where they were.
	AtMostOnce = recovery.AtMostOnce
)

// Config describes a job run.
type Config struct {
	Job         string
	Plan        *plan.Plan
	Fingerprint string
	Mode        Mode
	// Runtime holds the runtime options; the engine sets the checkpoint
	// and restore fields.
	Runtime task.Options
	// Unaligned makes exactly-once checkpoints unaligned.
	Unaligned bool
	// AlignedTimeout switches an aligned checkpoint that waits longer for
	// barriers at a task to the unaligned way (0: never).
	AlignedTimeout time.Duration

	Interval      time.Duration // between checkpoints; 0 disables periodic ones
	Timeout       time.Duration
	MinPause      time.Duration
	MaxConcurrent int
	Tolerable     int // consecutive checkpoint failures tolerated; <0 unlimited
	Retained      int // completed checkpoints kept in the store
	Tick          time.Duration

	// Settings are the job's settings its results depend on, by name;
	// every checkpoint records them and a restore needs them unchanged.
	Settings map[string]string

	// Run names this run in its checkpoints: a new name for a fresh run,
	// the restored checkpoint's for a restored one. A fresh run records
	// it in the store as the job's latest run before its first
	// checkpoint (store.StartRun).
	Run string

	// Store keeps checkpoints; required when checkpoints are on.
	Store *store.Checkpoints
	// Restore, if set, is the checkpoint the first attempt starts from.
	Restore *store.Metadata
	// RestoreExactly says that Restore was chosen by the user: if its
	// state fails verification the run fails, where otherwise it falls
	// back to the newest older usable checkpoint of the same run.
	RestoreExactly bool
	// AllowNonRestoredState lets a restore drop the state of the
	// checkpoint's operators this plan has no uid of; without it such
	// state fails the run.
	AllowNonRestoredState bool
	Restart               RestartStrategy
	// Failures, if set, injects failures.
	Failures *Injector
	// OnAttempt is told of each attempt's runtime, for metrics (local
	// attempts only).
	OnAttempt func(*task.Runtime)
	// OnSuccessor is told of each successor runtime a live rescale of a
	// local attempt starts (reshape.go), after OnAttempt of its attempt
	// and before the next attempt's: from then on the successor runs the
	// subtasks of the vertices it runs (Runtime.IsLocal), at the
	// parallelism of its plan.
	OnSuccessor func(*task.Runtime)
	// Deploy, if set, starts attempts elsewhere (a cluster's workers);
	// by default they run in this process.
	Deploy Deployer
	// Failover says what restarts after a task fails: the whole job
	// (Global), or only the failed task's pipelined region (FineGrained).
	Failover Failover
	// RetainLimit bounds the output each subtask retains for upstream
	// backup under fine-grained failover (0: DefaultRetainLimit).
	RetainLimit int64
	// SubtaskRestarts says that Deploy's executors restart single
	// subtasks (SubtaskRestarter), so that fine-grained failover on a
	// cluster restarts failed subtasks alone, with upstream backup, as
	// it does in one process.
	SubtaskRestarts bool
	// ActiveStandby runs an active standby of every subtask that can have
	// one (task.CanHaveStandby) under fine-grained failover with upstream
	// backup; a failed primary's standby takes its place.
	ActiveStandby bool
	// Adopt, if set, makes the run take over an attempt that already
	// runs: a new coordinator adopting the tasks its predecessor
	// deployed. Its first Deploy returns that attempt instead of starting
	// one from Restore (which stays what later attempts restore); the run
	// deletes no checkpoint state or shared files from the store (the
	// running tasks may still upload state of the checkpoints in flight,
	// and their stores count their shared files as uploaded), starts no
	// new run, and numbers its checkpoints after the newest one the
	// attempt saw.
	Adopt *Adoption
	// Log receives a line for each notable event (failures, restores).
	Log func(string)
	// LogCheckpoints also logs every completed checkpoint.
	LogCheckpoints bool
	// Live, if set, receives a copy of the report whenever it changes, for
	// readers on other goroutines.
	Live *Live
	// StallTimeout fails an attempt that made no progress this long (no
	// record moved, no checkpoint completed, no subtask finished or
	// restarted) with ErrStalled, after logging what it waits on; the
	// restart strategy then handles it. 0 never does. With checkpoints it
	// is at least twice Interval.
	StallTimeout time.Duration
	// OnStall, if set, receives the report of what a stalled attempt
	// waited on (it is logged too).
	OnStall func(report string)
	// Savepoints, if set, receives requests for savepoints while the job
	// runs (savepoint.go).
	Savepoints <-chan SavepointRequest
	// Rescales, if set, receives requests to change the parallelism of
	// tasks while the job runs (reshape.go).
	Rescales <-chan RescaleRequest
	// CheckConsistency verifies every checkpoint before it completes: on
	// each channel, the receiver's snapshot reflects exactly the records
	// the sender had sent before its own snapshot. A violation fails the
	// job for good. Aligned checkpoints must pass; at-least-once ones
	// (no alignment) may not.
	CheckConsistency bool
}

// Adoption describes the attempt a run adopts (Config.Adopt).
type Adoption struct {
	// LastTrigger is the newest checkpoint the attempt's subtasks were
	// triggered for: the run's first checkpoint comes after it.
	LastTrigger int64
}

// CheckpointStats describes one checkpoint.
type CheckpointStats struct {
	ID        int64         `json:"id"`
	Status    string        `json:"status"` // completed, aborted or in-progress
	Reason    string        `json:"reason,omitempty"`
	Triggered time.Time     `json:"triggered"`
	Duration  time.Duration `json:"duration_ns"`
	// Size is the bytes the checkpoint wrote: its state blobs and the
	// shared files it uploaded; FullSize the bytes it holds, with the
	// shared files earlier checkpoints uploaded (an incremental
	// checkpoint of the pebble backend; the same as Size otherwise).
	Size      int64         `json:"size_bytes"`
	FullSize  int64         `json:"full_size_bytes"`
	Alignment time.Duration `json:"alignment_ns"` // the longest alignment of any task
	Sync      time.Duration `json:"sync_ns"`      // the longest synchronous snapshot pause
}

// Recovery describes one failure and the recovery from it.
type Recovery struct {
	Cause    string    `json:"cause"`
	FailedAt time.Time `json:"failed_at"`
	// Restored is the checkpoint restored (0: started over).
	Restored int64 `json:"restored"`
	// Amnesia marks an at-most-once recovery: empty state, sources
	// continuing where they stopped.
	Amnesia bool `json:"amnesia,omitempty"`
	// LastCompleted is the last checkpoint completed before the failure.
	LastCompleted int64 `json:"last_completed"`
	// Duration runs from the failure to the first record written after
	// the restart (0 if nothing was written).
	Duration time.Duration `json:"duration_ns"`
	// Restarted is how many of the job's Subtasks restarted: all of them
	// under global failover, the failed region's under fine-grained.
	Restarted int `json:"restarted_subtasks"`
	Subtasks  int `json:"subtasks"`
	// Takeover marks a failure an active standby took over: nothing
	// restarted, and Duration runs to the moment the standby had applied
	// its primary's input and read the primary's inputs.
	Takeover bool `json:"takeover,omitempty"`
}

// CheckpointHistory is how many finished checkpoints a Report lists; the
// totals count them all. A job checkpointing every 100 ms for days must
// not grow its report without bound.
const CheckpointHistory = 1000

// Report tells what happened during a run.
type Report struct {
	// Checkpoints lists the latest CheckpointHistory finished checkpoints,
	// oldest first.
	Checkpoints []CheckpointStats
	// Completed and Aborted count every finished checkpoint of the run.
	Completed, Aborted int
	// ConsistencyChecked counts the checkpoints found to be consistent
	// cuts before they were stored (Config.CheckConsistency).
	ConsistencyChecked int `json:",omitempty"`
	// LastCompletedCheckpoint is the newest completed checkpoint, or nil.
	LastCompletedCheckpoint *CheckpointStats
	Recoveries              []Recovery
	Injected                int
	// Restored is the checkpoint the run started from, if any.
	Restored int64
	// Savepoints lists the savepoints the run wrote, oldest first.
	Savepoints []string
	// Stopped is set if the run ended because a savepoint asked it to.
	Stopped bool
	// Adopted is set if the run took over an attempt that was running
	// (Config.Adopt): it restored nothing.
	Adopted bool `json:",omitempty"`
	// Rescales lists the changes of parallelism, oldest first: the live
	// ones of this run (one per task changed), and, in a cluster's job
	// record, those that ended a run and started another.
	Rescales []Rescale `json:",omitempty"`
	// LeaderChanges lists the coordinators that took a cluster's job
	// over, oldest first; like Rescales, the cluster's job record keeps
	// it, and the engine leaves it empty.
	LeaderChanges []LeaderChange `json:",omitempty"`
}

// LeaderChange describes one takeover of a cluster's job by a new
// leading coordinator.
type LeaderChange struct {
	// At is when the new leader resumed the job; Epoch is its leadership
	// epoch.
	At    time.Time `json:"at"`
	Epoch uint64    `json:"epoch"`
	// Adopted says it adopted the tasks the workers kept running; if not,
	// it restarted the job from its latest checkpoint.
	Adopted bool `json:"adopted"`
	// Wait is how long it waited for the workers' reports.
	Wait time.Duration `json:"wait_ns"`
}

// Rescale describes one change of a job's parallelism: the job stopped at
// a checkpoint and started again at the new parallelism from it, or,
// Live, the task changed parallelism at the checkpoint while the rest of
// the job ran on.
type Rescale struct {
	// Task names the task that changed, for a live rescale (a restart
	// changes the whole job's parallelism).
	Task string `json:"task,omitempty"`
	// Live says the job did not restart (engine.RescaleRequest).
	Live bool `json:"live,omitempty"`
	// At is when the stop's checkpoint was triggered (for a restart
	// after workers left, when the restart was decided).
	At   time.Time `json:"at"`
	From int       `json:"from"`
	To   int       `json:"to"`
	// Checkpoint is the checkpoint the job stopped at and restored.
	Checkpoint int64 `json:"checkpoint"`
	// Cause says why: "requested" (weir rescale), or for a job with
	// --parallelism auto the change of workers.
	Cause string `json:"cause"`
	// Pause runs from At to the first record the sinks wrote after the
	// restart, as the workers timed it (0 until then); for a live rescale,
	// to when the new subtasks restored their state.
	Pause time.Duration `json:"pause_ns"`
}

// LastCompleted returns the newest completed checkpoint id, or 0.
func (r *Report) LastCompleted() int64 {
	if r.LastCompletedCheckpoint == nil {
		return 0
	}
	return r.LastCompletedCheckpoint.ID
}

// add records a finished checkpoint.
func (r *Report) add(c CheckpointStats) {
	if c.Status == "completed" {
		r.Completed++
		if r.LastCompletedCheckpoint == nil || c.ID > r.LastCompletedCheckpoint.ID {
			cc := c
			r.LastCompletedCheckpoint = &cc
		}
	} else {
		r.Aborted++
	}
	if len(r.Checkpoints) == CheckpointHistory {
		r.Checkpoints = append(r.Checkpoints[:0], r.Checkpoints[1:]...)
	}
	r.Checkpoints = append(r.Checkpoints, c)
}

// Live holds the latest copy of a running job's report.
type Live struct {
	mu  sync.Mutex
	rep Report
}

// Report returns a copy of the latest report.
func (l *Live) Report() *Report {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.rep
	r.Checkpoints = append([]CheckpointStats(nil), l.rep.Checkpoints...)
	r.Recoveries = append([]Recovery(nil), l.rep.Recoveries...)
	return &r
}

// publish copies the report to cfg.Live.
func (e *engine) publish() {
	if l := e.cfg.Live; l != nil {
		l.mu.Lock()
		l.rep = e.report
		l.rep.Checkpoints = append([]CheckpointStats(nil), e.report.Checkpoints...)
		l.rep.Recoveries = append([]Recovery(nil), e.report.Recoveries...)
		l.mu.Unlock()
	}
}

type engine struct {
	cfg       Config
	report    Report
	latest    *store.Metadata // the newest completed checkpoint
	nextID    checkpoint.ID
	saveQueue []pendingSavepoint            // savepoint requests waiting for their checkpoint's trigger
	saveFor   map[int64][]pendingSavepoint  // by the checkpoint triggered for them
	positions map[dataflow.SubtaskID][]byte // at-most-once: where sources stood
	gaps      map[task.GapKey]int64         // at-most-once: the operators' gap marks
	stats     map[int64]*CheckpointStats
	retention retainer // deletes the checkpoints beyond the retained ones (retain.go)
}

// prepareStore clears what a run before this one left in the store:
// unless the run adopts tasks that still run, nothing is in flight, so
// the state of checkpoints that never completed is garbage, and so are
// the shared state files no checkpoint names (uploaded for checkpoints
// that never completed). An adopting run of no completed checkpoint
// continues the run recorded last.
func (e *engine) prepareStore(ctx context.Context) error {
	cfg := &e.cfg
	if cfg.Adopt != nil {
		if cfg.Restore == nil {
			r, ok, err := cfg.Store.LastRun(ctx, cfg.Job)
			if err != nil {
				return err
			}
			if ok {
				cfg.Run = r.Run
			}
		}
		return nil
	}
	if _, err := cfg.Store.DeleteUncommitted(ctx, cfg.Job, math.MaxUint64); err != nil {
		return err
	}
	_, err := cfg.Store.DeleteUnnamedShared(ctx, cfg.Job, cfg.Restore)
	return err
}

// Run runs the job until it finishes, fails for good, or ctx ends.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Tick <= 0 {
		cfg.Tick = 10 * time.Millisecond
	}
	if cfg.Restart == nil {
		cfg.Restart = NoRestart{}
	}
	if cfg.Log == nil {
		cfg.Log = func(string) {}
	}
	if cfg.Run == "" && cfg.Restore != nil {
		cfg.Run = cfg.Restore.Run
	}
	if cfg.Run == "" {
		cfg.Run = store.NewRunID()
	}
	e := &engine{cfg: cfg, nextID: 1, stats: map[int64]*CheckpointStats{}}
	if cfg.ActiveStandby && !e.taskFailover() {
		return nil, errors.New("engine: active standby needs fine-grained failover and aligned checkpoints")
	}
	if e.checkpoints() {
		if cfg.Store == nil {
			return nil, errors.New("engine: checkpoints need a store")
		}
		ids, err := cfg.Store.Committed(ctx, cfg.Job)
		if err != nil {
			return nil, fmt.Errorf("listing checkpoints of %q: %w", cfg.Job, err)
		}
		if len(ids) > 0 {
			e.nextID = checkpoint.ID(ids[len(ids)-1] + 1)
		}
		if err := e.prepareStore(ctx); err != nil {
			return nil, err
		}
		switch {
		case cfg.Adopt != nil:
			what := "no checkpoint completed yet, so a restart starts over"
			if cfg.Restore != nil {
				m := *cfg.Restore
				e.latest = &m
				what = fmt.Sprintf("checkpoint %d is what a restart restores", m.ID)
			}
			cfg.Log(fmt.Sprintf("adopting the attempt that runs: it restores nothing (%s); checkpoints continue after %d", what, cfg.Adopt.LastTrigger))
			e.report.Adopted = true
			if next := checkpoint.ID(cfg.Adopt.LastTrigger + 1); next > e.nextID {
				e.nextID = next
			}
		case cfg.Restore == nil:
			if err := cfg.Store.StartRun(ctx, cfg.Job, store.RunRecord{Run: cfg.Run, StartedMillis: time.Now().UnixMilli()}); err != nil {
				return nil, err
			}
		default:
			m := *cfg.Restore
			e.latest = &m
			e.report.Restored = int64(m.ID)
			if next := checkpoint.ID(m.ID + 1); next > e.nextID {
				e.nextID = next
			}
		}
	}
	err := e.run(ctx)
	e.awaitRetention()
	e.failSavepoints(err)
	if cfg.Failures != nil {
		e.report.Injected = cfg.Failures.Injected()
	}
	e.publish()
	return &e.report, err
}

func (e *engine) checkpoints() bool {
	return e.cfg.Mode == ExactlyOnce || e.cfg.Mode == AtLeastOnce
}

func (e *engine) run(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		restore, err := e.restoreState(ctx)
		if err != nil {
			return err
		}
		err = e.attempt(ctx, restore)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if fell, ferr := e.fallBack(ctx, err); ferr != nil {
			return ferr
		} else if fell {
			continue
		}
		var fatal *fatalError
		if errors.As(err, &fatal) || e.cfg.Mode == None || errors.Is(err, task.ErrNotDeterministic) || task.IsPermanent(err) {
			return err
		}
		now := time.Now()
		rec := Recovery{Cause: err.Error(), FailedAt: now, LastCompleted: e.report.LastCompleted(),
			Restarted: e.cfg.Plan.Subtasks(), Subtasks: e.cfg.Plan.Subtasks()}
		if e.latest != nil && e.cfg.Mode != AtMostOnce {
			rec.Restored = int64(e.latest.ID)
		}
		rec.Amnesia = e.cfg.Mode == AtMostOnce
		e.report.Recoveries = append(e.report.Recoveries, rec)
		e.publish()
		delay, ok := e.cfg.Restart.Next(now)
		if !ok {
			return fmt.Errorf("restart strategy %s gave up after %d failures: %w", e.cfg.Restart, len(e.report.Recoveries), err)
		}
		e.cfg.Log(fmt.Sprintf("failure %d: %v; restarting in %v from %s", len(e.report.Recoveries), err, delay, e.describeRestore()))
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (e *engine) describeRestore() string {
	switch {
	case e.cfg.Mode == AtMostOnce:
		return "empty state, sources where they stopped"
	case e.latest != nil:
		return fmt.Sprintf("checkpoint %d", e.latest.ID)
	}
	return "the beginning (no checkpoint completed yet)"
}

// fallBack handles an attempt that failed with err. If err is the state
// of the checkpoint being restored failing verification, fallBack marks
// that checkpoint unusable in the store and makes the newest older usable
// checkpoint of the same run the one to restore, and reports true; the
// attempt is then retried at once. If there is none to fall back to, or
// the user chose the checkpoint (Config.RestoreExactly), it returns the
// error that ends the run.
func (e *engine) fallBack(ctx context.Context, err error) (bool, error) {
	id, corrupt := CorruptCheckpoint(err)
	if !corrupt || e.latest == nil || id != e.latest.ID {
		return false, nil
	}
	bad := &unusableError{id: id, err: err}
	if e.cfg.RestoreExactly && e.cfg.Restore != nil && bad.id == e.cfg.Restore.ID {
		what := "restore another checkpoint, or --restore latest to fall back to the newest usable one"
		if e.cfg.Restore.Savepoint() {
			what = "restore another savepoint or checkpoint"
		}
		return false, &fatalError{fmt.Errorf("%w; %s", bad.err, what)}
	}
	if merr := e.cfg.Store.MarkUnusable(ctx, e.cfg.Job, bad.id, bad.err); merr != nil {
		e.cfg.Log(fmt.Sprintf("checkpoint %d: %v", bad.id, merr))
	}
	prev, _, lerr := e.cfg.Store.LatestBefore(ctx, e.cfg.Job, bad.id)
	if lerr == nil && prev.Run != e.latest.Run {
		lerr = fmt.Errorf("checkpoint %d belongs to another run", prev.ID)
	}
	if lerr != nil {
		return false, &fatalError{fmt.Errorf("%w; no older checkpoint of this run to fall back to (%v): start the job over without --restore", bad.err, lerr)}
	}
	e.cfg.Log(fmt.Sprintf("checkpoint %d is unusable: %v; restoring checkpoint %d instead: sinks withdraw the output committed after it where they can (the file sink does); others may repeat it",
		bad.id, bad.err, prev.ID))
	if e.report.Restored == int64(bad.id) {
		e.report.Restored = int64(prev.ID)
	}
	e.latest = &prev
	return true, nil
}

// fatalError is a failure no restart can cure.
type fatalError struct{ err error }

func (f *fatalError) Error() string { return f.err.Error() }
func (f *fatalError) Unwrap() error { return f.err }

// restoreState returns the checkpoint the next attempt restores, after
// checking that it fits the pipeline.
func (e *engine) restoreState(ctx context.Context) (*store.Metadata, error) {
	if e.latest == nil || e.cfg.Mode == AtMostOnce || !e.checkpoints() {
		return nil, nil
	}
	if err := e.latest.Fits(e.cfg.Layout()); err != nil {
		return nil, &fatalError{err}
	}
	return e.latest, nil
}

// Layout returns what the state of the run's checkpoints depends on: the
// plan's key groups, operators and parallelism, the job's settings and
// the guarantee. Every checkpoint records it; a restore needs it equal.
func (c *Config) Layout() store.Layout {
	l := store.Layout{MaxParallelism: c.Plan.MaxParallelism, Parallelism: map[int]int{}, Settings: c.Settings, Guarantee: c.Mode.String()}
	if c.Runtime.State != nil {
		l.StateBackend = "pebble"
	}
	for _, v := range c.Plan.Vertices {
		l.Parallelism[v.ID] = v.Parallelism
		for _, n := range v.Chain {
			l.Operators = append(l.Operators, store.Operator{Vertex: v.ID, ID: n.ID, Kind: n.Kind.String(), Name: n.Name, UID: c.Plan.UID(n)})
		}
	}
	return l
}

// Fingerprint describes a plan's shape, so that a checkpoint is not
// restored into a different pipeline.
func Fingerprint(p *plan.Plan) string {
	var b []byte
	for _, v := range p.Vertices {
		for _, n := range v.Chain {
			b = fmt.Appendf(b, "%d:%s:%s;", n.ID, n.Kind, n.Name)
		}
		b = append(b, '|')
	}
	sum := uint32(2166136261)
	for _, c := range b {
		sum = (sum ^ uint32(c)) * 16777619
	}
	return fmt.Sprintf("%08x", sum)
}

func encodeHandle(h store.Handle) checkpoint.Handle {
	b, _ := json.Marshal(h)
	return checkpoint.Handle(b)
}

func decodeHandle(h checkpoint.Handle) (store.Handle, error) {
	var out store.Handle
	err := json.Unmarshal([]byte(h), &out)
	return out, err
}
