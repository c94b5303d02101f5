package checkpoint

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/weir-stream/weir/internal/dataflow"
)

// Action is a decision of the Coordinator for the shell to carry out. It is
// one of Trigger, Persist, Complete, Abort, Discard and FailJob. The shell
// carries actions out in the order they are returned; the coordinator does
// not wait for any of them except Persist, whose outcome the shell reports
// with Stored or StoreFailed.
type Action interface {
	fmt.Stringer
	isAction()
}

// Trigger starts checkpoint ID: the shell tells every source to inject
// barrier ID into its output. Tasks then answer with Ack or Decline.
//
// If IDs must never repeat across restarts of the coordinator, the shell
// records ID durably before telling the sources (see Config.FirstID).
type Trigger struct {
	ID ID
	// Timestamp is the tick at which the checkpoint was triggered.
	Timestamp int64
	// Sources are the tasks to tell, as given in Config.Sources.
	Sources []dataflow.SubtaskID
}

// Persist says every task has acknowledged checkpoint ID. The shell writes
// the checkpoint's metadata (Handles, one per task) atomically, then reports
// Stored(ID) or StoreFailed(ID, err). The checkpoint is not complete, and must
// not be restored from or committed, until the coordinator emits Complete.
type Persist struct {
	ID      ID
	Handles map[dataflow.SubtaskID]Handle
}

// Complete says checkpoint ID is durable: the shell notifies the tasks (so
// two-phase-commit sinks commit) and may restore from it. Complete IDs are
// strictly increasing.
type Complete struct {
	ID ID
}

// Abort ends checkpoint ID without completing it. The shell tells the tasks
// (so two-phase-commit sinks roll back), deletes the listed Handles and any
// metadata it wrote for ID. An aborted checkpoint is never restored from.
type Abort struct {
	ID     ID
	Reason Reason
	// Task is the task that declined, for ReasonDeclined.
	Task dataflow.SubtaskID
	// Detail is the task's decline cause, or the store error's text.
	Detail string
	// Handles are the acknowledgements collected before the abort. Deleting
	// a handle means dropping this checkpoint's reference to it; a storage
	// layer whose files are shared between checkpoints counts references.
	Handles map[dataflow.SubtaskID]Handle
}

// Discard says Handle, from an acknowledgement the coordinator did not
// accept, is referenced by no checkpoint: the shell deletes it.
type Discard struct {
	ID     ID
	Task   dataflow.SubtaskID
	Handle Handle
}

// FailJob says more consecutive checkpoints failed than
// Config.TolerableFailures allows: the shell fails the job (Err is a
// suitable cause). The coordinator has already stopped triggering and
// aborted the checkpoints still collecting acknowledgements; the shell
// calls Resume once the job runs again.
type FailJob struct {
	// Failures is the number of consecutive failed checkpoints.
	Failures int
	// Last is the abort that exceeded the limit.
	Last Abort
}

// ErrTooManyFailures is wrapped by FailJob.Err.
var ErrTooManyFailures = errors.New("too many consecutive checkpoint failures")

// Err describes the failure as an error wrapping ErrTooManyFailures.
func (f FailJob) Err() error {
	return fmt.Errorf("%w: %d, last: checkpoint %d %s", ErrTooManyFailures, f.Failures, f.Last.ID, f.Last.cause())
}

func (Trigger) isAction()  {}
func (Persist) isAction()  {}
func (Complete) isAction() {}
func (Abort) isAction()    {}
func (Discard) isAction()  {}
func (FailJob) isAction()  {}

func (a Trigger) String() string {
	// Sources are left out: they are the same in every Trigger.
	return fmt.Sprintf("Trigger %d at=%d", a.ID, a.Timestamp)
}

func (a Persist) String() string {
	return fmt.Sprintf("Persist %d handles=%s", a.ID, formatHandles(a.Handles))
}

func (a Complete) String() string { return fmt.Sprintf("Complete %d", a.ID) }

func (a Abort) String() string {
	s := fmt.Sprintf("Abort %d %s", a.ID, a.cause())
	if len(a.Handles) > 0 {
		s += " handles=" + formatHandles(a.Handles)
	}
	return s
}

func (a Abort) cause() string {
	switch a.Reason {
	case ReasonDeclined, ReasonNotReady:
		return fmt.Sprintf("%s by %v: %s", a.Reason, a.Task, a.Detail)
	case ReasonStoreFailed:
		return fmt.Sprintf("%s: %s", a.Reason, a.Detail)
	}
	return a.Reason.String()
}

func (a Discard) String() string {
	return fmt.Sprintf("Discard %d %v:%s", a.ID, a.Task, a.Handle)
}

func (a FailJob) String() string {
	return fmt.Sprintf("FailJob failures=%d (last: %d %s)", a.Failures, a.Last.ID, a.Last.cause())
}

// formatHandles prints handles ordered by task, e.g. "[0.0:h1 1.0:h2]".
func formatHandles(h map[dataflow.SubtaskID]Handle) string {
	tasks := make([]dataflow.SubtaskID, 0, len(h))
	for t := range h {
		tasks = append(tasks, t)
	}
	slices.SortFunc(tasks, compareTasks)
	parts := make([]string, len(tasks))
	for i, t := range tasks {
		parts[i] = fmt.Sprintf("%v:%s", t, h[t])
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func compareTasks(a, b dataflow.SubtaskID) int {
	return cmp.Or(cmp.Compare(a.Vertex, b.Vertex), cmp.Compare(a.Subtask, b.Subtask))
}

// Reason says why a checkpoint was aborted.
type Reason int

const (
	// ReasonTimeout: not all tasks acknowledged within Config.Timeout ticks.
	// Counts as a failure.
	ReasonTimeout Reason = iota + 1
	// ReasonDeclined: a task declined (Abort.Task, Abort.Detail). Counts as
	// a failure.
	ReasonDeclined
	// ReasonStoreFailed: the shell could not write the metadata
	// (Abort.Detail). Counts as a failure.
	ReasonStoreFailed
	// ReasonJobFailure: the job failed (JobFailed, or FailJob) while the
	// checkpoint collected acknowledgements. Not counted: the job is
	// already failing.
	ReasonJobFailure
	// ReasonSubsumed: a newer checkpoint completed first, so this one is no
	// longer needed. Not a failure.
	ReasonSubsumed
	// ReasonNotReady: a task could not take part yet (Abort.Task,
	// Abort.Detail), as a subtask restarted alone that has not caught up
	// with its previous incarnation's output. Not a failure: a later
	// checkpoint succeeds once it caught up.
	ReasonNotReady
)

// CountsAsFailure reports whether an abort for r moves the job towards
// FailJob. Job failures, subsumption and tasks not ready yet say nothing
// about the health of checkpointing, so only the other reasons count.
func (r Reason) CountsAsFailure() bool {
	return r == ReasonTimeout || r == ReasonDeclined || r == ReasonStoreFailed
}

func (r Reason) String() string {
	switch r {
	case ReasonTimeout:
		return "timeout"
	case ReasonDeclined:
		return "declined"
	case ReasonStoreFailed:
		return "store failed"
	case ReasonJobFailure:
		return "job failure"
	case ReasonSubsumed:
		return "subsumed"
	case ReasonNotReady:
		return "not ready"
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// AckResult classifies an acknowledgement, for tests and metrics. Whether
// its handle must be deleted is decided separately, by a Discard action.
type AckResult int

const (
	// AckSuccess: the first acknowledgement of a pending checkpoint by one of
	// its tasks. The handle now belongs to the checkpoint.
	AckSuccess AckResult = iota + 1
	// AckDuplicate: the task had already acknowledged this checkpoint. The
	// first handle wins; a different second handle is discarded while the
	// coordinator still holds the first one to compare with (the checkpoint
	// is pending or being persisted). After completion it cannot compare,
	// and keeps the handle rather than risk deleting state the completed
	// checkpoint references.
	AckDuplicate
	// AckUnknown: the checkpoint was not triggered by this coordinator (or
	// finished too long ago to be remembered), or the task is not one of
	// Config.Tasks. The handle is discarded only when the checkpoint is known
	// and the task is not: state of an unknown checkpoint may belong to an
	// earlier coordinator's completed checkpoint.
	AckUnknown
	// AckLate: the checkpoint was aborted. The handle is discarded.
	AckLate
)

func (r AckResult) String() string {
	switch r {
	case AckSuccess:
		return "success"
	case AckDuplicate:
		return "duplicate"
	case AckUnknown:
		return "unknown"
	case AckLate:
		return "late"
	}
	return fmt.Sprintf("AckResult(%d)", int(r))
}
