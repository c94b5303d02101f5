package checkpoint

import (
	"errors"
	"fmt"

	"github.com/weir-stream/weir/internal/dataflow"
)

// ID identifies a checkpoint. IDs increase by one with every trigger and are
// never reused by one Coordinator; see Config.FirstID for reuse across
// restarts of the coordinator itself.
type ID int64

// Handle is a task's opaque reference to the state it stored for one
// checkpoint, typically the URI of a state file or an encoded descriptor.
// The coordinator never looks inside; it compares handles only to tell a
// retried acknowledgement (same handle) from a second snapshot (different
// handle).
type Handle string

// UnlimitedFailures, as Config.TolerableFailures, means checkpoint failures
// never fail the job.
const UnlimitedFailures = -1

// DefaultHistory is the number of finished checkpoints remembered when
// Config.History is zero.
const DefaultHistory = 100

// Config is the fixed description of one job's checkpointing. All durations
// are in ticks: the coordinator has no clock, the shell decides how long a
// tick is and calls Coordinator.Tick once per tick.
type Config struct {
	// Tasks must all acknowledge a checkpoint for it to complete. Required,
	// without duplicates. The coordinator only compares the ids of tasks;
	// it gives them no meaning.
	Tasks []dataflow.SubtaskID
	// Sources are the tasks that inject the barrier when a checkpoint is
	// triggered; they are copied into every Trigger. Required, a subset of
	// Tasks.
	Sources []dataflow.SubtaskID

	// Interval is the number of ticks from one trigger to the next periodic
	// trigger. Zero disables periodic checkpoints (only TriggerNow triggers).
	Interval int64
	// MinPause is the least number of ticks between the end (completion or
	// abort) of one checkpoint and the next periodic trigger. It lets the job
	// make progress when checkpoints take about as long as Interval.
	MinPause int64
	// MaxConcurrent bounds the checkpoints in flight (triggered and neither
	// completed nor aborted, including those being persisted). Zero means 1.
	MaxConcurrent int
	// Timeout is the number of ticks after its trigger at which a checkpoint
	// still waiting for acknowledgements is aborted. Required (> 0): without
	// it one lost acknowledgement would stop checkpointing for good.
	Timeout int64

	// TolerableFailures is how many consecutive failed checkpoints (timed
	// out, declined or not stored) the job survives: the next failure, if
	// the job is running, emits FailJob. A completed checkpoint and Resume
	// reset the count; a failure of a checkpoint older than the last
	// completed one is not counted. UnlimitedFailures (any negative value)
	// never fails the job.
	//
	// The zero value tolerates no failure at all, as Flink does by default:
	// the first failed checkpoint fails the job. A Go zero value cannot mean
	// both "tolerate zero" and "unlimited", and a field that reads as a count
	// should behave as one, so unlimited must be asked for by name.
	TolerableFailures int

	// FirstID is the ID of the first checkpoint this coordinator triggers;
	// zero means 1. After a restart, pass one more than the highest ID any
	// earlier coordinator of the job triggered (not merely the one restored
	// from), so that state written for an aborted attempt is never mistaken
	// for a new one. The shell learns the IDs from Trigger actions.
	FirstID ID

	// History is how many finished checkpoints are kept for Stats and for
	// classifying late acknowledgements. Zero means DefaultHistory.
	History int
}

// ErrBadConfig is wrapped by the error New returns for an unusable Config.
var ErrBadConfig = errors.New("bad checkpoint config")

// normalize checks cfg and fills in defaults.
func (cfg Config) normalize() (Config, error) {
	bad := func(format string, args ...any) (Config, error) {
		return Config{}, fmt.Errorf("%w: %s", ErrBadConfig, fmt.Sprintf(format, args...))
	}
	if len(cfg.Tasks) == 0 {
		return bad("no tasks")
	}
	if len(cfg.Sources) == 0 {
		return bad("no sources")
	}
	tasks := make(map[dataflow.SubtaskID]bool, len(cfg.Tasks))
	for _, t := range cfg.Tasks {
		if tasks[t] {
			return bad("task %v listed twice", t)
		}
		tasks[t] = true
	}
	sources := make(map[dataflow.SubtaskID]bool, len(cfg.Sources))
	for _, s := range cfg.Sources {
		if !tasks[s] {
			return bad("source %v is not a task", s)
		}
		if sources[s] {
			return bad("source %v listed twice", s)
		}
		sources[s] = true
	}
	switch {
	case cfg.Interval < 0:
		return bad("negative interval %d", cfg.Interval)
	case cfg.MinPause < 0:
		return bad("negative min pause %d", cfg.MinPause)
	case cfg.MaxConcurrent < 0:
		return bad("negative max concurrent %d", cfg.MaxConcurrent)
	case cfg.Timeout <= 0:
		return bad("timeout %d must be positive", cfg.Timeout)
	case cfg.FirstID < 0:
		return bad("negative first id %d", cfg.FirstID)
	case cfg.History < 0:
		return bad("negative history %d", cfg.History)
	}
	if cfg.MaxConcurrent == 0 {
		cfg.MaxConcurrent = 1
	}
	if cfg.FirstID == 0 {
		cfg.FirstID = 1
	}
	if cfg.History == 0 {
		cfg.History = DefaultHistory
	}
	cfg.Tasks = append([]dataflow.SubtaskID(nil), cfg.Tasks...)
	cfg.Sources = append([]dataflow.SubtaskID(nil), cfg.Sources...)
	return cfg, nil
}
