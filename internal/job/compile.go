// Package job turns what a pipeline's options say about its runs
// (Settings) and its physical plan into the engine's configuration of a
// run (Compile), and gives weir's command line a built pipeline's engine
// side (Handle) without a package-level hook.
package job

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/recovery"
	"github.com/weir-stream/weir/internal/state/lsm"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// Settings are what a pipeline's options set about its runs; the root
// package's options document each.
type Settings struct {
	Name          string
	Guarantee     recovery.Guarantee
	Failover      recovery.Failover
	RetainLimit   int64
	ActiveStandby bool
	Checkpoints   Checkpoints
	// Restart is nil for the guarantee's default.
	Restart       engine.RestartStrategy
	Failures      int
	FailureSeed   uint64
	FailureWindow time.Duration
	// FailuresAfterCheckpoint holds random-moment kills back until a
	// checkpoint completed (engine.Injector.AfterCheckpoint).
	FailuresAfterCheckpoint bool
	// Restore is "", "latest", a checkpoint's path or a savepoint's.
	Restore string
	// AllowNonRestoredState lets a restore drop the state of operators
	// the job no longer has.
	AllowNonRestoredState bool
	// Recorded holds the settings the job's results depend on, which a
	// restore checks.
	Recorded          map[string]string
	Log               func(string)
	WatermarkInterval time.Duration
	BufferTimeout     time.Duration
	IdleTimeout       time.Duration
	QueueCapacity     int
	LatencyInterval   time.Duration
	// StallTimeout is nil for DefaultStallTimeout.
	StallTimeout *time.Duration
	OnStall      func(string)
	// State chooses the state backend.
	State StateBackend
}

// StateBackend is where keyed state lives: Backend "memory" (or "") keeps
// it in Go maps; "pebble" in LSM stores on local disk, in Dir (a
// temporary directory when empty), with a block cache and memtables of
// the given bytes shared by every store of the process (defaults when
// zero). The job whose store opens first sizes what the process shares,
// until no run in the process uses it (a worker's lasts its life).
//
// The memory backend checkpoints incrementally into the job's shared files
// (state.Incremental) unless FullSnapshots is set.
type StateBackend struct {
	Backend       string
	Dir           string
	BlockCache    int64
	MemTables     int64
	FullSnapshots bool
	// IncrementalFrom is state.Incremental.From.
	IncrementalFrom int64
}

// ParseStateBackend checks a --state-backend value.
func ParseStateBackend(s string) (string, error) {
	switch s {
	case "", "memory":
		return "memory", nil
	case "pebble":
		return s, nil
	}
	return "", fmt.Errorf("unknown state backend %q: want memory or pebble", s)
}

// Checkpoints are the checkpoint knobs, as weir.CheckpointConfig (which
// converts to it) documents them; zero fields take defaults.
type Checkpoints struct {
	Interval          time.Duration
	Timeout           time.Duration
	MinPause          time.Duration
	MaxConcurrent     int
	TolerableFailures int
	Retained          int
	StateDir          string
	Unaligned         bool
	AlignedTimeout    time.Duration
	Log               bool
	CheckConsistency  bool
}

// DefaultStallTimeout is the stall timeout of a job that sets none.
const DefaultStallTimeout = time.Minute

// ErrOtherRun means a restore would continue another run's output than
// the one it was asked to continue.
var ErrOtherRun = errors.New("the checkpoint belongs to another run")

// Compile returns the engine configuration of a run of the job c
// describes, with physical plan pl: runtime options, checkpoint knobs
// with their defaults, restart strategy, injected failures, the
// checkpoint store (fenced by fence, if not nil) and, when c asks for a
// restore, the checkpoint to restore, checked against the plan before
// anything runs. onAttempt, if not nil, receives the runtime of every
// attempt. Compile opens the state directory; it starts nothing.
func Compile(ctx context.Context, c *Settings, pl *plan.Plan, fence store.Fence, onAttempt func(*task.Runtime)) (engine.Config, error) {
	ck := c.Checkpoints
	if ck.Interval == 0 {
		ck.Interval = time.Second
	}
	if ck.Timeout == 0 {
		ck.Timeout = 10 * time.Minute
	}
	if ck.MaxConcurrent == 0 {
		ck.MaxConcurrent = 1
	}
	if ck.Retained == 0 {
		ck.Retained = 3
	}
	logf := c.Log
	if logf == nil {
		logf = func(string) {}
	}
	cfg := engine.Config{
		Job: c.Name, Plan: pl, Fingerprint: engine.Fingerprint(pl), Settings: c.Recorded,
		Runtime: task.Options{Job: c.Name, QueueCapacity: c.QueueCapacity, WatermarkInterval: c.WatermarkInterval,
			BufferTimeout: c.BufferTimeout, IdleTimeout: c.IdleTimeout, LatencyInterval: c.LatencyInterval},
		Unaligned: ck.Unaligned, AlignedTimeout: ck.AlignedTimeout, Interval: ck.Interval, Timeout: ck.Timeout, MinPause: ck.MinPause,
		MaxConcurrent: ck.MaxConcurrent, Tolerable: ck.TolerableFailures, Retained: ck.Retained,
		Restart: c.Restart, LogCheckpoints: ck.Log, AllowNonRestoredState: c.AllowNonRestoredState,
		OnAttempt:        onAttempt,
		CheckConsistency: ck.CheckConsistency,
		Log:              logf,
	}
	if c.Failover == recovery.FineGrained {
		cfg.Failover = engine.FineGrained
	}
	cfg.RetainLimit = c.RetainLimit
	cfg.StallTimeout, cfg.OnStall = DefaultStallTimeout, c.OnStall
	if c.StallTimeout != nil {
		cfg.StallTimeout = *c.StallTimeout
	}
	// Without checkpoints a failure fails the job: failover, and so the
	// standbys, play no part.
	cfg.ActiveStandby = c.ActiveStandby && c.Guarantee.Checkpoints()
	switch c.Guarantee {
	case recovery.ExactlyOnce, recovery.AtLeastOnce, recovery.AtMostOnce:
		cfg.Mode = c.Guarantee
	default:
		cfg.Mode = recovery.None
	}
	if c.ActiveStandby && (c.Failover != recovery.FineGrained || ck.Unaligned || ck.AlignedTimeout > 0) {
		return cfg, errors.New("active standby needs fine-grained failover and aligned checkpoints")
	}
	if cfg.Restart == nil {
		if cfg.Mode == engine.None {
			cfg.Restart = engine.NoRestart{}
		} else {
			cfg.Restart = &engine.FixedDelay{Attempts: 10, Delay: 100 * time.Millisecond}
		}
	}
	if c.Failures > 0 {
		cfg.Failures = engine.NewInjector(c.Failures, c.FailureSeed)
		cfg.Failures.AfterCheckpoint = c.FailuresAfterCheckpoint
		switch {
		case c.FailureWindow > 0:
			cfg.Failures.MaxDelay = c.FailureWindow
		case c.Guarantee.Checkpoints():
			cfg.Failures.MaxDelay = min(3*ck.Interval, time.Second)
		default:
			cfg.Failures.MaxDelay = 100 * time.Millisecond
		}
	}
	state := func(st *store.Checkpoints) error {
		backend, err := ParseStateBackend(c.State.Backend)
		if err != nil {
			return err
		}
		if backend != "pebble" {
			if c.Guarantee.Checkpoints() && !c.State.FullSnapshots {
				// Memory state checkpoints incrementally into the
				// job's shared files (state.Incremental).
				cfg.Runtime.Memory = &task.MemoryState{Files: st.Shared(c.Name), From: c.State.IncrementalFrom}
			}
			return nil
		}
		cfg.Runtime.State = &task.LSMState{Files: st.Shared(c.Name),
			Config: lsm.Config{Dir: c.State.Dir, BlockCache: c.State.BlockCache, MemTables: c.State.MemTables}}
		return nil
	}
	if !c.Guarantee.Checkpoints() {
		if err := state(store.New(blob.Memory())); err != nil {
			return cfg, err
		}
		if c.Restore != "" {
			return cfg, fmt.Errorf("restoring a checkpoint needs the exactly-once or at-least-once guarantee, not %s", c.Guarantee)
		}
		return cfg, nil
	}
	var blobs blob.Store = blob.Memory()
	if ck.StateDir != "" {
		var err error
		if blobs, err = blob.Open(ctx, ck.StateDir); err != nil {
			return cfg, err
		}
	}
	cfg.Store = store.New(blobs)
	cfg.Run = store.NewRunID()
	if fence != nil {
		cfg.Store = cfg.Store.Fenced(fence)
	}
	if err := state(cfg.Store); err != nil {
		return cfg, err
	}
	switch c.Restore {
	case "":
	case "latest":
		if ck.StateDir == "" {
			return cfg, errors.New("--restore needs a state directory (--state-dir)")
		}
		m, skipped, err := cfg.Store.Latest(ctx, c.Name)
		for _, s := range skipped {
			logf(fmt.Sprintf("%v; trying an older one", s))
		}
		if len(skipped) > 0 && err == nil {
			logf(fmt.Sprintf("restoring checkpoint %d, older than the newest completed one: sinks withdraw the output committed after it where they can (the file sink does); others may repeat it", m.ID))
		}
		if err != nil {
			return cfg, fmt.Errorf("restoring the latest checkpoint of %q from %s: %w", c.Name, ck.StateDir, err)
		}
		if err := latestRunTookIt(ctx, cfg.Store, c.Name, &m); err != nil {
			return cfg, err
		}
		cfg.Restore = &m
	default:
		load := cfg.Store.LoadPath
		if store.IsSavepoint(c.Restore) {
			load = cfg.Store.LoadSavepoint
		}
		m, err := load(ctx, c.Restore)
		if err != nil {
			return cfg, fmt.Errorf("restoring checkpoint %s: %w", c.Restore, err)
		}
		cfg.Restore = &m
		cfg.RestoreExactly = true
	}
	if cfg.Restore != nil {
		// Refuse before anything runs, not at the first attempt.
		if err := cfg.Restore.Fits(cfg.Layout()); err != nil {
			return cfg, err
		}
		cfg.Run = cfg.Restore.Run
		if cfg.Restore.Job != c.Name {
			// A checkpoint of another job name: the files of its stores
			// go into this job's shared area, which its own checkpoints
			// will name.
			if err := cfg.Store.CopyShared(ctx, cfg.Restore, c.Name); err != nil {
				return cfg, err
			}
		}
		if store.IsSavepoint(c.Restore) {
			logf(fmt.Sprintf("restoring savepoint %s (of checkpoint %d of run %s)", c.Restore, cfg.Restore.ID, cfg.Restore.Run))
		} else {
			logf(fmt.Sprintf("restoring checkpoint %d", cfg.Restore.ID))
		}
		for _, line := range restoreChanges(cfg.Restore, cfg.Plan, c.AllowNonRestoredState) {
			logf(line)
		}
		if cfg.Restore.Final {
			logf(fmt.Sprintf("checkpoint %d is the final checkpoint of run %s: that run read its input to the end, so this one reads nothing and only commits the output it left uncommitted", cfg.Restore.ID, cfg.Run))
		}
	}
	return cfg, nil
}

// latestRunTookIt returns an error if checkpoint m, the newest of job,
// was taken by an earlier run than the job's latest: then the latest run
// stopped before its first checkpoint, and restoring m would continue the
// earlier run's output (all of it, if that run finished) instead of the
// latest's.
func latestRunTookIt(ctx context.Context, st *store.Checkpoints, job string, m *store.Metadata) error {
	last, ok, err := st.LastRun(ctx, job)
	if err != nil || !ok || m.Run == "" || last.Run == m.Run {
		return err
	}
	earlier := fmt.Sprintf("the earlier run %s", m.Run)
	if m.Final {
		earlier += ", which finished"
	}
	return fmt.Errorf("%w: the latest run of %q (run %s, started %s) stopped before its first checkpoint; the newest checkpoint, %d, belongs to %s, and restoring it would continue that run's output, not the latest's. Start the job over without --restore (or, to continue the earlier run, restore checkpoint %d by its path into that run's output)",
		ErrOtherRun, job, last.Run, last.Started().Format(time.DateTime), m.ID, earlier, m.ID)
}

// restoreChanges describes how restoring checkpoint m into plan p moves
// its state: the operators whose task runs at another parallelism (their
// state moves by key group), those new in p (they start empty), and
// those of m that p has no uid of.
func restoreChanges(m *store.Metadata, p *plan.Plan, drop bool) []string {
	from := engine.RestoreOrigin(m, p, drop)
	var out []string
	for _, v := range p.Vertices {
		for _, n := range v.Chain {
			o, ok := from.Nodes[n.ID]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("checkpoint %d has no operator with uid %q: operator %q starts empty", m.ID, p.UID(n), n.Name))
			case m.Parallelism[o.Vertex] != v.Parallelism:
				how := "its state moves by key group"
				switch n.Kind {
				case plan.Source:
					how = "its positions move through its connector"
				case plan.Sink:
					how = "the pending transactions of old subtask i go to new subtask i mod the new parallelism"
				default:
					if r, ok := n.Impl.(task.Redistributable); ok {
						switch r.Redistribution() {
						case task.Reassigned:
							how = "the state of old subtask i goes to new subtask i mod the new parallelism"
						case task.Union:
							how = "every new subtask reads the state of every old one (operator list state, split evenly or whole)"
						}
					}
				}
				out = append(out, fmt.Sprintf("checkpoint %d ran operator %q (uid %q) with parallelism %d, this run has %d: %s",
					m.ID, n.Name, p.UID(n), m.Parallelism[o.Vertex], v.Parallelism, how))
			}
		}
	}
	for _, o := range from.Unclaimed {
		what := "a restore fails if it holds state (--allow-non-restored-state drops it)"
		if drop {
			what = "its state, if any, is dropped (--allow-non-restored-state)"
		}
		out = append(out, fmt.Sprintf("this job has no operator with uid %q, which checkpoint %d's operator %q has: %s", o.UID, m.ID, o.Name, what))
	}
	return out
}
