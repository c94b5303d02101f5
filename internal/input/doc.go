// Package input is the protocol by which a subtask reads its input
// channels: checkpoint barrier alignment (aligned, unaligned, at least
// once, the switch after an aligned timeout, and the checkpoints that
// must be aligned whatever the mode: savepoints), per-channel sequence
// numbers and the drop of duplicates, the wait for the replays a subtask
// restarted alone asked for, the repetition of a logged consumption
// order, watermark merging and idleness, and the end of input.
//
// It is the protocol only, a pure state machine in the style of etcd's
// raft: stream elements and control messages go in, Actions come out
// (deliver these records, block this channel, take the snapshot now,
// advance the watermark, finish, ...). It starts no goroutines, reads no
// clock, holds no records and does no I/O: the caller (the shell) owns
// the gate, the buffers, the operator chain and the timers, and carries
// the actions out.
//
// # Contract
//
// The shell creates one Protocol per incarnation of a subtask with New
// and calls it from the subtask's goroutine only (a Protocol is not safe
// for concurrent use):
//
//  1. Before the first element, and only then: Restore with the channel
//     counts and watermark state of the checkpoint, when the subtask was
//     restarted alone; Follow with the consumption order to repeat;
//     CatchingUp(true) when its output is behind its previous
//     incarnation's; RequestReplays when it must ask its senders to
//     replay their retained output.
//  2. Then in a loop: Next says which channel to read (one channel while
//     a logged order is followed or a split batch waits, any otherwise);
//     the shell takes one element from there (a batch it holds for that
//     channel before the gate) and calls Step with it.
//  3. Between steps, as they happen: Abort and Trigger for the job's
//     control messages, AlignedTimeout when the timer an Align action
//     armed expires, CatchingUp(false) once the output caught up (at the
//     latest before the next Step), SnapshotFailed when a Snapshot action
//     could not be carried out. An active standby, which steps its
//     primary's logged input instead of reading a gate, calls Resume
//     where the log shows a replay started (the primary's
//     ReplayStarted).
//
// Every call returns the actions it decided, in the order the shell must
// carry them out before its next call; nothing is left to collect later.
// The returned slice is the Protocol's and valid until the next call. What
// each action obliges the shell to do is said at its ActionKind.
//
// The Protocol panics when the shell breaks the contract (a channel out
// of range, a batch without records, Restore after the first Step): those
// are bugs of the shell, not conditions of the stream. What the stream
// can get wrong (lost records, a barrier behind what was consumed)
// answers with a Fail action.
//
// # Shape
//
// Raft's Ready and Advance exist because its application must persist
// before it sends and may batch much work, which it acknowledges later.
// Nothing here is pipelined: each action is cheap, local, and must take
// effect before the next element is read (a snapshot reflects exactly the
// records delivered before it; a block holds before the next poll). So a
// call returns its actions and there is nothing to acknowledge; the one
// action that can fail, Snapshot, is reported back with SnapshotFailed.
// Actions are one concrete struct in a slice the Protocol reuses, not
// interface values: Step runs once per batch on the hot path and
// allocates nothing there.
//
// Time enters in one place only. An alignment may switch to the unaligned
// way once it waited longer than the aligned timeout; rather than count
// ticks, which would wake every subtask periodically, the Protocol says
// when an alignment starts (Align) and the shell, which owns the clock,
// reports the expiry of its timer (AlignedTimeout). Tests drive it
// without any clock.
package input
