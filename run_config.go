package weir

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// engineConfig turns the pipeline's options into the engine's.
func (p *Pipeline) engineConfig(ctx context.Context, pl *plan.Plan) (engine.Config, error) {
	c := p.cfg
	ck := c.ckpt
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
	logf := c.logf
	if logf == nil {
		logf = func(string) {}
	}
	cfg := engine.Config{
		Job: c.name, Plan: pl, Fingerprint: engine.Fingerprint(pl), Settings: c.settings,
		Runtime: task.Options{Job: c.name, QueueCapacity: c.queueCapacity, WatermarkInterval: c.watermarkInterval,
			BufferTimeout: c.bufferTimeout, IdleTimeout: c.idleTimeout, LatencyInterval: c.latencyInterval},
		Unaligned: ck.Unaligned, AlignedTimeout: ck.AlignedTimeout, Interval: ck.Interval, Timeout: ck.Timeout, MinPause: ck.MinPause,
		MaxConcurrent: ck.MaxConcurrent, Tolerable: ck.TolerableFailures, Retained: ck.Retained,
		Restart: c.restart, LogCheckpoints: ck.Log,
		OnAttempt:        func(rt *task.Runtime) { p.running.Store(rt) },
		CheckConsistency: ck.CheckConsistency,
		Log:              logf,
	}
	if c.failover == FineGrainedFailover {
		cfg.Failover = engine.FineGrained
	}
	cfg.RetainLimit = c.retainLimit
	cfg.StallTimeout, cfg.OnStall = DefaultStallTimeout, c.onStall
	if c.stallTimeout != nil {
		cfg.StallTimeout = *c.stallTimeout
	}
	// Without checkpoints a failure fails the job: failover, and so the
	// standbys, play no part.
	cfg.ActiveStandby = c.activeStandby && c.guarantee.Checkpoints()
	switch c.guarantee {
	case ExactlyOnce:
		cfg.Mode = engine.ExactlyOnce
	case AtLeastOnce:
		cfg.Mode = engine.AtLeastOnce
	case AtMostOnce:
		cfg.Mode = engine.AtMostOnce
	default:
		cfg.Mode = engine.None
	}
	if c.activeStandby && (c.failover != FineGrainedFailover || ck.Unaligned || ck.AlignedTimeout > 0) {
		return cfg, errors.New("active standby needs fine-grained failover and aligned checkpoints")
	}
	if cfg.Restart == nil {
		if cfg.Mode == engine.None {
			cfg.Restart = engine.NoRestart{}
		} else {
			cfg.Restart = &engine.FixedDelay{Attempts: 10, Delay: 100 * time.Millisecond}
		}
	}
	if c.failures > 0 {
		cfg.Failures = engine.NewInjector(c.failures, c.failureSeed)
		switch {
		case c.failureWindow > 0:
			cfg.Failures.MaxDelay = c.failureWindow
		case c.guarantee.Checkpoints():
			cfg.Failures.MaxDelay = min(3*ck.Interval, time.Second)
		default:
			cfg.Failures.MaxDelay = 100 * time.Millisecond
		}
	}
	if !c.guarantee.Checkpoints() {
		if c.restore != "" {
			return cfg, fmt.Errorf("restoring a checkpoint needs the exactly-once or at-least-once guarantee, not %s", c.guarantee)
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
	if p.fence != nil {
		cfg.Store = cfg.Store.Fenced(p.fence)
	}
	switch c.restore {
	case "":
	case "latest":
		if ck.StateDir == "" {
			return cfg, errors.New("--restore needs a state directory (--state-dir)")
		}
		m, skipped, err := cfg.Store.Latest(ctx, c.name)
		for _, s := range skipped {
			logf(fmt.Sprintf("%v; trying an older one", s))
		}
		if len(skipped) > 0 && err == nil {
			logf(fmt.Sprintf("restoring checkpoint %d, older than the newest completed one: sinks withdraw the output committed after it where they can (the file sink does); others may repeat it", m.ID))
		}
		if err != nil {
			return cfg, fmt.Errorf("restoring the latest checkpoint of %q from %s: %w", c.name, ck.StateDir, err)
		}
		if err := latestRunTookIt(ctx, cfg.Store, c.name, &m); err != nil {
			return cfg, err
		}
		cfg.Restore = &m
	default:
		m, err := cfg.Store.LoadPath(ctx, c.restore)
		if err != nil {
			return cfg, fmt.Errorf("restoring checkpoint %s: %w", c.restore, err)
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
		logf(fmt.Sprintf("restoring checkpoint %d", cfg.Restore.ID))
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
