package weir

import (
	"time"

	"github.com/weir-stream/weir/internal/engine"
)

// Report describes a run so far: its checkpoints and recoveries.
// Pipeline.Report returns it; it has the same JSON form as a cluster's
// job reports.
type Report struct {
	// Checkpoints lists the latest finished checkpoints (up to 1000),
	// oldest first.
	Checkpoints []CheckpointStats
	// Completed and Aborted count every finished checkpoint of the run.
	Completed, Aborted int
	// ConsistencyChecked counts the checkpoints found to be consistent
	// cuts before they were stored (CheckpointConfig.CheckConsistency).
	ConsistencyChecked int `json:",omitempty"`
	// LastCompletedCheckpoint is the newest completed checkpoint, or nil.
	LastCompletedCheckpoint *CheckpointStats
	// Recoveries lists the run's failures and the recoveries from them.
	Recoveries []Recovery
	// Injected counts the failures injected (WithInjectedFailures).
	Injected int
	// Restored is the checkpoint the run started from, if any.
	Restored int64
	// Savepoints lists the savepoints the run wrote, oldest first.
	Savepoints []string
	// Stopped says the run ended because StopWithSavepoint asked it to.
	Stopped bool
	// Rescales lists the changes of parallelism of a job on a cluster
	// (weir rescale, --parallelism auto) and the live ones of a running
	// pipeline (Pipeline.Rescale), oldest first.
	Rescales []Rescale `json:",omitempty"`
	// LeaderChanges lists the coordinators that took a job on a cluster
	// over (weir coordinator --ha, or one started again), oldest first.
	LeaderChanges []LeaderChange `json:",omitempty"`
}

// LeaderChange describes one takeover of a job on a cluster by a new
// leading coordinator.
type LeaderChange struct {
	// At is when the new leader resumed the job; Epoch is its leadership
	// epoch.
	At    time.Time `json:"at"`
	Epoch uint64    `json:"epoch"`
	// Adopted says it adopted the tasks the workers kept running: none
	// restarted. If not, it restarted the job from its latest checkpoint.
	Adopted bool `json:"adopted"`
	// Wait is how long it waited for the workers' reports.
	Wait time.Duration `json:"wait_ns"`
}

// Rescale describes one change of parallelism of a job on a cluster: it
// stopped at a checkpoint and started again at the new parallelism from
// that checkpoint.
type Rescale struct {
	// Task names the task that changed, for a live rescale (a restart
	// changes the whole job's parallelism).
	Task string `json:"task,omitempty"`
	// Live says the job did not restart: the task changed parallelism at
	// the checkpoint while the rest of the job ran on.
	Live bool `json:"live,omitempty"`
	// At is when the stop's checkpoint was triggered (for a restart
	// after workers left, when the restart was decided).
	At   time.Time `json:"at"`
	From int       `json:"from"`
	To   int       `json:"to"`
	// Checkpoint is the checkpoint the job stopped at and restored.
	Checkpoint int64 `json:"checkpoint"`
	// Cause says why: "requested", or the change of workers that a job
	// with --parallelism auto followed.
	Cause string `json:"cause"`
	// Pause runs from At to the first record the sinks wrote after the
	// restart, as the workers timed it (0 until then); for a live
	// rescale, to when the new subtasks restored their state.
	Pause time.Duration `json:"pause_ns"`
}

// LastCompleted returns the newest completed checkpoint id, or 0.
func (r *Report) LastCompleted() int64 {
	if r.LastCompletedCheckpoint == nil {
		return 0
	}
	return r.LastCompletedCheckpoint.ID
}

// CheckpointStats describes one checkpoint of a run.
type CheckpointStats struct {
	ID int64 `json:"id"`
	// Status is completed, aborted or in-progress; Reason says why a
	// checkpoint was aborted.
	Status    string        `json:"status"`
	Reason    string        `json:"reason,omitempty"`
	Triggered time.Time     `json:"triggered"`
	Duration  time.Duration `json:"duration_ns"`
	// Size is the bytes the checkpoint wrote; FullSize the bytes it
	// holds, with the files earlier checkpoints uploaded that it shares
	// (an incremental checkpoint of the pebble state backend; equal to
	// Size under the memory backend).
	Size     int64 `json:"size_bytes"`
	FullSize int64 `json:"full_size_bytes"`
	// Alignment is the longest barrier alignment of any task, Sync the
	// longest synchronous snapshot pause.
	Alignment time.Duration `json:"alignment_ns"`
	Sync      time.Duration `json:"sync_ns"`
}

// Recovery describes one failure of a run and the recovery from it.
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

// reportOf returns the engine's report r as a Report, sharing nothing
// with it (nil slices stay nil, empty ones empty); nil for nil.
func reportOf(r *engine.Report) *Report {
	if r == nil {
		return nil
	}
	out := &Report{Completed: r.Completed, Aborted: r.Aborted, ConsistencyChecked: r.ConsistencyChecked, Injected: r.Injected, Restored: r.Restored,
		Savepoints: r.Savepoints, Stopped: r.Stopped}
	if r.Checkpoints != nil {
		out.Checkpoints = make([]CheckpointStats, len(r.Checkpoints))
		for i, c := range r.Checkpoints {
			out.Checkpoints[i] = CheckpointStats(c)
		}
	}
	if c := r.LastCompletedCheckpoint; c != nil {
		cc := CheckpointStats(*c)
		out.LastCompletedCheckpoint = &cc
	}
	for _, rs := range r.Rescales {
		out.Rescales = append(out.Rescales, Rescale(rs))
	}
	for _, lc := range r.LeaderChanges {
		out.LeaderChanges = append(out.LeaderChanges, LeaderChange(lc))
	}
	if r.Recoveries != nil {
		out.Recoveries = make([]Recovery, len(r.Recoveries))
		for i, rec := range r.Recoveries {
			out.Recoveries[i] = Recovery(rec)
		}
	}
	return out
}
