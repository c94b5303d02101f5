package task

import (
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
)

// Host is what a Runtime reports to: the job that runs it (the engine,
// or a cluster worker that passes the reports on to its coordinator).
// Options.Host sets it; nil means nobody listens.
//
// Every method is called from a goroutine the runtime owns and Run
// waits for, concurrently with the others and with itself: a method that
// blocks, to hand its report over, must return once Run's context is
// done, or Run never returns. Each method says in which mode it is
// called; in the other modes it never is.
type Host interface {
	// SnapshotTaken receives each subtask's contribution to a checkpoint,
	// with checkpoints on: its state, or the error that kept it from
	// taking the snapshot (Err: it failed, or declined while it catches
	// up). It is called from the subtask's goroutine, or for a taken
	// snapshot from the goroutine that encodes its state; it must not
	// block for long.
	SnapshotTaken(SnapshotResult)
	// Finished is told that a subtask finished its input, with checkpoints
	// on, from the subtask's goroutine. The subtask then waits for
	// Release, but reads neither its gate nor its inbox until Finished
	// returns: it must not block for long. A subtask stopped to restart
	// may still report its end (see Runtime.Finished).
	Finished(dataflow.SubtaskID)
	// Failed is told of a failed subtask under UpstreamBackup, from the
	// subtask's goroutine after it stopped: the subtask is out of the job
	// until Restart. Subtasks the job stopped (Stop), and failures an
	// active standby took over (TakenOver), are not reported.
	Failed(dataflow.SubtaskID, error)
	// TakenOver is told, under ActiveStandby, that subtask id's local
	// standby took the place of its primary, which failed with err at
	// failed. It is called from the standby's goroutine, which goes on as
	// the subtask once it returns. A remote standby the job promoted
	// (Promote) is not reported.
	TakenOver(id dataflow.SubtaskID, err error, failed time.Time)
	// StandbyStopped is told, under ActiveStandby, that subtask id's
	// active standby stopped with err without taking its primary's place
	// (its log was dropped, it failed), from the standby's goroutine. A
	// standby stopped by the runtime or the job, by the end of Run, or
	// for a task found not deterministic (which fails Run) is not
	// reported.
	StandbyStopped(id dataflow.SubtaskID, err error)
}

// NopHost is a Host that ignores every report. A host that cares for
// only some of them embeds it and defines those.
type NopHost struct{}

func (NopHost) SnapshotTaken(SnapshotResult)                   {}
func (NopHost) Finished(dataflow.SubtaskID)                    {}
func (NopHost) Failed(dataflow.SubtaskID, error)               {}
func (NopHost) TakenOver(dataflow.SubtaskID, error, time.Time) {}
func (NopHost) StandbyStopped(dataflow.SubtaskID, error)       {}
