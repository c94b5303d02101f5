package cluster

import (
	"errors"
	"fmt"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/task"
)

// Workers report failures to the coordinator as text, which loses what
// the engine branches on: whether a restart can cure the failure
// (task.IsPermanent) and whether a checkpoint's state was found corrupt
// (engine.CorruptCheckpoint). A report therefore carries its class
// (pb.FailureClass), and the coordinator rebuilds an error of that class.

// classify returns the class of a failure err that a worker reports, and
// for a corrupt checkpoint its id.
func classify(err error) (pb.FailureClass, uint64) {
	if id, ok := engine.CorruptCheckpoint(err); ok {
		return pb.FailureClass_FAILURE_CORRUPT_CHECKPOINT, id
	}
	if task.IsPermanent(err) || errors.Is(err, task.ErrNotDeterministic) {
		return pb.FailureClass_FAILURE_PERMANENT, 0
	}
	return pb.FailureClass_FAILURE_RESTARTABLE, 0
}

// remoteFailure is the error of a failure that worker reported as text
// msg of class, with corrupt the checkpoint of a corrupt-checkpoint
// failure.
func remoteFailure(worker, msg string, class pb.FailureClass, corrupt uint64) error {
	err := fmt.Errorf("on worker %s: %s", worker, msg)
	switch class {
	case pb.FailureClass_FAILURE_PERMANENT:
		return task.Permanent(err)
	case pb.FailureClass_FAILURE_CORRUPT_CHECKPOINT:
		return engine.UnusableCheckpoint(corrupt, err)
	}
	return err
}

// attemptEnded is the report of a worker's share of attempt key that
// ended with err (nil: its subtasks finished).
func attemptEnded(key string, err error) *pb.AttemptEnded {
	out := &pb.AttemptEnded{Key: key}
	if err != nil {
		out.Error = err.Error()
		out.Class, out.CorruptCheckpoint = classify(err)
	}
	return out
}

// subtaskFailedReport is the report of subtask id of attempt key that failed
// alone with err; standby: its active standby failed, not the subtask.
func subtaskFailedReport(key string, id dataflow.SubtaskID, err error, standby bool) *pb.SubtaskFailed {
	out := &pb.SubtaskFailed{Key: key, Subtask: ref(id), Error: err.Error(), Standby: standby}
	out.Class, out.CorruptCheckpoint = classify(err)
	return out
}
