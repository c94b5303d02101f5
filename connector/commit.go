package connector

import "context"

// Committer is an optional ability of a Writer: two-phase commit tied to
// checkpoints, which makes a sink exactly-once. The engine finds it by type
// assertion.
//
// At the barrier of checkpoint id, after every record before the barrier
// was written, the engine calls PreCommit: the writer makes those records
// durable but not yet visible and returns a description of the
// transaction, which the engine stores in the checkpoint. Once the
// checkpoint completed, the engine calls Commit with that description,
// making the records visible. A transaction whose checkpoint was aborted
// is committed with the next checkpoint that completes.
//
// Commit must be idempotent: after a failure the engine commits the
// transactions of the restored checkpoint again, some of which may already
// be committed.
//
// Recover is called once after Open, before any Write, whenever the
// subtask starts with checkpoints on: with the id of the checkpoint it
// restores (0 on a fresh start) and that checkpoint's transactions. The
// writer commits them and aborts every other transaction this subtask may
// have left behind in an earlier attempt, so that nothing written after
// the restored checkpoint becomes visible. When an older checkpoint is
// restored because a newer one is unusable, transactions of checkpoints
// after restored may already be committed: a writer that can withdraw
// committed output (a file sink can) does so; one that cannot leaves it,
// and those records may then appear twice.
//
// When a job restores at another parallelism of the sink, each old
// subtask's transactions go to one new subtask: old subtask i's to new
// subtask i mod n, for n new subtasks. Subtask j then also aborts what
// the old subtasks j+n, j+2n, ... (no longer there) left behind.
type Committer interface {
	PreCommit(ctx context.Context, checkpoint int64) (txn []byte, err error)
	Commit(ctx context.Context, txn []byte) error
	Recover(ctx context.Context, restored int64, commit [][]byte) error
}

// Idempotent is an optional ability of a Sink whose writes can be repeated
// without changing the result (an upsert by key, say), which makes it
// exactly-once without transactions when the job's records are
// deterministic.
type Idempotent interface {
	Idempotent() bool
}

type checkpointKey struct{}

// WithCheckpoint returns ctx marked as belonging to checkpoint id. The
// engine passes such a context to Writer.Flush when it flushes for a
// checkpoint barrier (sinks without two-phase commit).
func WithCheckpoint(ctx context.Context, id int64) context.Context {
	return context.WithValue(ctx, checkpointKey{}, id)
}

// CheckpointOf returns the checkpoint a Flush is for, if it is for one:
// every record written before it precedes that checkpoint's barrier.
func CheckpointOf(ctx context.Context) (int64, bool) {
	id, ok := ctx.Value(checkpointKey{}).(int64)
	return id, ok
}
