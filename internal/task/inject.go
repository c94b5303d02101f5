package task

import (
	"fmt"

	"github.com/weir-stream/weir/internal/dataflow"
)

// This file names the points of the checkpoint protocol at which a job
// that injects failures may fail a subtask (Point), and the error such a
// failure carries (InjectedError).

// Point is a named moment at which failures can be injected.
type Point int

const (
	// PointAlignment: a task has some but not all barriers of a checkpoint.
	PointAlignment Point = iota + 1
	// PointSnapshotBeforeAck: a task snapshotted but has not acknowledged.
	PointSnapshotBeforeAck
	// PointCompleteBeforeCommit: a checkpoint completed and a task is told,
	// before its sinks commit.
	PointCompleteBeforeCommit
	// PointRecovery: a task restores its state after a failure.
	PointRecovery
	// PointReplay: a restored task handles its first records again.
	PointReplay
)

// Points lists every named point.
var Points = []Point{PointAlignment, PointSnapshotBeforeAck, PointCompleteBeforeCommit, PointRecovery, PointReplay}

func (p Point) String() string {
	switch p {
	case PointAlignment:
		return "during-alignment"
	case PointSnapshotBeforeAck:
		return "after-snapshot-before-ack"
	case PointCompleteBeforeCommit:
		return "after-complete-before-commit"
	case PointRecovery:
		return "during-recovery"
	case PointReplay:
		return "during-replay"
	}
	return fmt.Sprintf("point(%d)", int(p))
}

// InjectedError is the failure of a task killed on purpose.
type InjectedError struct {
	Point      string
	Subtask    dataflow.SubtaskID
	Checkpoint int64
}

func (e *InjectedError) Error() string {
	if e.Checkpoint > 0 {
		return fmt.Sprintf("injected failure %s (subtask %s, checkpoint %d)", e.Point, e.Subtask, e.Checkpoint)
	}
	return fmt.Sprintf("injected failure %s (subtask %s)", e.Point, e.Subtask)
}

// inject asks Options.Inject whether to fail at point p.
func (s *subtask) inject(p Point, checkpoint int64) error {
	if s.rt.opts.Inject == nil || s.role.standby() {
		return nil // a standby is killed by KillStandby
	}
	if s.rt.opts.Inject(p, dataflow.SubtaskID{Vertex: s.v.ID, Subtask: s.index}, checkpoint) {
		return &InjectedError{Point: p.String(), Subtask: dataflow.SubtaskID{Vertex: s.v.ID, Subtask: s.index}, Checkpoint: checkpoint}
	}
	return nil
}
