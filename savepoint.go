package weir

import (
	"context"
	"time"

	"github.com/weir-stream/weir/internal/engine"
)

// Savepoint describes a savepoint a running job wrote: a self-contained,
// versioned copy of one of its checkpoints in a directory of its own,
// which no retention deletes and which WithRestore (weir run --restore)
// takes by its path, also into a changed job (see UID) or at another
// parallelism. docs/savepoints.md describes the format.
type Savepoint struct {
	// Path is the savepoint's directory (or blob URL).
	Path string `json:"path"`
	// Checkpoint is the id of the checkpoint it copies.
	Checkpoint int64 `json:"checkpoint"`
	// Bytes is its size.
	Bytes int64 `json:"bytes"`
	// Duration is the time from the request to the savepoint written.
	Duration time.Duration `json:"duration_ns"`
}

// ErrNotRunning means a savepoint was asked of a pipeline that is not
// running.
var ErrNotRunning = engine.ErrNotRunning

// ErrNoCheckpoints means a savepoint was asked of a pipeline that takes
// no checkpoints (guarantee at-most-once or none), so it has none to
// copy.
var ErrNoCheckpoints = engine.ErrNoSavepoints

// Savepoint asks the running pipeline for a savepoint under dir (a
// directory, file:///path or s3://bucket/prefix?endpoint=URL). It starts
// a checkpoint at once (or when the one in flight finished), aligned even
// if the pipeline's checkpoints are unaligned (CheckpointConfig), so that
// the savepoint holds no records in flight and restores at another
// parallelism and into a changed pipeline. It copies it into a new
// directory under dir once it completed, and returns where. It fails if
// the pipeline does not run, takes no checkpoints (guarantee
// at-most-once or none), or the checkpoint aborts; it is safe to call
// from any goroutine while Run runs.
func (p *Pipeline) Savepoint(ctx context.Context, dir string) (Savepoint, error) {
	return p.savepoint(ctx, dir, false, false)
}

// StopWithSavepoint takes a savepoint as Savepoint does and then stops
// the job: once every sink committed the savepoint's checkpoint, Run
// returns nil, Status says "stopped" and Report().Stopped is true. A
// transactional sink's output then ends exactly at the savepoint, so a
// run restored from it continues the output without a gap or a
// duplicate. With Drain the job is drained before the savepoint.
func (p *Pipeline) StopWithSavepoint(ctx context.Context, dir string, opts ...StopOption) (Savepoint, error) {
	var c stopConfig
	for _, o := range opts {
		o(&c)
	}
	return p.savepoint(ctx, dir, true, c.drain)
}

// StopOption changes how StopWithSavepoint stops a job.
type StopOption func(*stopConfig)

type stopConfig struct{ drain bool }

// Drain has StopWithSavepoint drain the job (weir stop --drain): the
// sources emit the final watermark right before the savepoint's
// barrier, so every event-time window and timer fires and its output is
// part of what the sinks commit with the savepoint; the job then stops.
// Use it to end a job for good: a run restored from a drained savepoint
// takes every later record as late, its windows having fired. Without
// Drain, windows still open stay in the savepoint's state and fire in
// the run restored from it. Should the drained checkpoint abort, the run
// fails (its sources already emitted the final watermark) and restarts
// from its latest completed checkpoint as its restart strategy allows.
func Drain() StopOption { return func(c *stopConfig) { c.drain = true } }

// engineSavepoint is Savepoint or StopWithSavepoint in the engine's
// terms, for a cluster's coordinator (Engine).
func (p *Pipeline) engineSavepoint(ctx context.Context, dir string, stop, drain bool) (engine.SavepointResult, error) {
	s, err := p.savepoint(ctx, dir, stop || drain, drain)
	return engine.SavepointResult{Path: s.Path, Checkpoint: s.Checkpoint, Bytes: s.Bytes, Duration: s.Duration}, err
}

func (p *Pipeline) savepoint(ctx context.Context, dir string, stop, drain bool) (Savepoint, error) {
	end := p.runEnd.Load()
	if end == nil || p.Status().State != "running" {
		return Savepoint{}, ErrNotRunning
	}
	reply := make(chan engine.SavepointResult, 1)
	select {
	case p.saves <- engine.SavepointRequest{Dir: dir, Stop: stop, Drain: drain, Reply: reply}:
	case <-*end:
		return Savepoint{}, ErrNotRunning
	case <-ctx.Done():
		return Savepoint{}, ctx.Err()
	}
	select {
	case r := <-reply:
		if r.Err != nil {
			return Savepoint{}, r.Err
		}
		return Savepoint{Path: r.Path, Checkpoint: r.Checkpoint, Bytes: r.Bytes, Duration: r.Duration}, nil
	case <-ctx.Done():
		return Savepoint{}, ctx.Err()
	}
}
