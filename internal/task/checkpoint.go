package task

import (
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
)

// This file holds the checkpoint types the runtime shares with operators
// (Snapshotter, CheckpointListener) and with the engine (CheckpointMode,
// SnapshotResult, ChannelCount). A subtask aligns barriers as its input
// protocol decides (input.go), and takes, encodes and decodes its
// snapshot in snapshot.go.

// CheckpointMode says how a runtime takes checkpoints.
type CheckpointMode int

const (
	// NoCheckpoints: barriers are never injected.
	NoCheckpoints CheckpointMode = iota
	// Aligned checkpoints block each input after its barrier until the
	// barrier arrived on all inputs: the snapshot reflects exactly the
	// records before the barrier (exactly-once).
	Aligned
	// Unaligned checkpoints let barriers overtake records; the overtaken
	// records are stored with the snapshot (exactly-once).
	Unaligned
	// AtLeastOnce checkpoints count barriers without blocking inputs:
	// records after a barrier may enter the snapshot, so a restore may
	// replay them twice.
	AtLeastOnce
)

// Snapshotter is implemented by operators that hold state.
//
// Snapshot is called on the task goroutine when the task takes a
// checkpoint; it freezes a logical copy of the state and returns the
// function that encodes it, which runs on another goroutine while the
// operator goes on. Nothing the operator or its user's functions change
// after Snapshot returns may reach that function: state they may change in
// place without the operator seeing it is encoded by Snapshot itself
// (state.TableOptions). The function appends the encoded state to dst, a
// buffer the task owns, and returns it as Encoded.Data (dst and the state
// after it), so that large state is encoded once, straight into the
// subtask's snapshot. An error from the function declines the checkpoint.
// Restore is called before Open with the bytes an earlier Snapshot encoded:
// once, or, when the task restores a checkpoint taken at another
// parallelism, once per old subtask whose state this subtask takes over
// (see Redistributable); each call adds to what the earlier ones restored.
type Snapshotter interface {
	Snapshot(SnapshotOptions) (func(dst []byte) (Encoded, error), error)
	Restore(data []byte) error
}

// SnapshotOptions say what a snapshot is for.
type SnapshotOptions struct {
	// Checkpoint is the checkpoint's id.
	Checkpoint int64
	// Savepoint asks for the state in the format every state backend
	// reads (a savepoint's), not in the backend's own.
	Savepoint bool
}

// Encoded is an operator's encoded snapshot: its bytes, and the names of
// the job's shared state files it refers to (an LSM store's incremental
// checkpoint), which the checkpoint store keeps while a retained
// checkpoint names them.
type Encoded struct {
	Data   []byte
	Shared []string
	// SharedBytes is the size of the shared files, Uploaded the bytes of
	// them this snapshot uploaded.
	SharedBytes, Uploaded int64
}

// Taken returns the encoding function of a snapshot taken synchronously
// as b, for Snapshotter implementations whose state is small.
func Taken(b []byte) func(dst []byte) (Encoded, error) {
	return func(dst []byte) (Encoded, error) { return Encoded{Data: append(dst, b...)}, nil }
}

// CheckpointListener is implemented by operators that act when a
// checkpoint completes or is aborted, such as two-phase-commit sinks.
// PrepareSnapshot is called before Snapshot, at the barrier.
type CheckpointListener interface {
	PrepareSnapshot(id int64) error
	CheckpointComplete(id int64) error
	CheckpointAborted(id int64)
}

// SnapshotResult is a subtask's contribution to checkpoint Checkpoint,
// handed to Host.SnapshotTaken.
type SnapshotResult struct {
	Subtask    dataflow.SubtaskID
	Checkpoint int64
	State      []byte
	// Shared names the job's shared state files State refers to;
	// SharedBytes is their size and Uploaded the bytes of them this
	// snapshot uploaded.
	Shared                []string
	SharedBytes, Uploaded int64
	// Err is set when the subtask could not take the snapshot.
	Err error
	// Alignment is how long the subtask waited for barriers; Sync is the
	// time processing stopped for the snapshot; Async the encoding time.
	Alignment, Sync, Async time.Duration
	// Channels counts, per channel, the records this subtask had sent
	// (as sender) or had reflected in its state (as receiver) when it took
	// the snapshot, for the consistency check.
	Channels []ChannelCount
}

// ChannelCount is a record count on a channel.
type ChannelCount struct {
	dataflow.Channel
	Sender bool
	N      int64
}
