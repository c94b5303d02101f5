package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// Executor runs one attempt of a job's plan: in this process (Local) or
// across the worker processes of a cluster. The engine drives it from one
// goroutine; only Run blocks.
type Executor interface {
	// Run runs the attempt until every subtask finished (nil), one failed
	// (its error), or ctx ends (ctx.Err()). Everything it started has
	// stopped when it returns.
	Run(ctx context.Context) error
	// Kill fails the attempt as if subtask id had failed with err.
	Kill(id dataflow.SubtaskID, err error)
	// Trigger starts checkpoint id at the sources and at finished
	// subtasks, as how says (task.Runtime.Trigger): a savepoint's must be
	// aligned even in a job of unaligned checkpoints or with an aligned
	// timeout (its snapshot holds no in-flight records), and a drained
	// savepoint's sources first advance to the final watermark.
	Trigger(id int64, how task.TriggerOptions)
	// TriggerSubtask asks one subtask to take checkpoint id directly.
	TriggerSubtask(sid dataflow.SubtaskID, id int64)
	// Complete and Abort report a checkpoint's fate to every subtask.
	Complete(id int64)
	Abort(id int64)
	// Release lets finished subtasks exit.
	Release()
	// Written returns the records the sinks have written so far.
	Written() int64
	// Positions returns where the sources stand (at-most-once recovery).
	Positions() map[dataflow.SubtaskID][]byte
}

// GapMarker is an optional ability of an Executor: the operators' gap
// marks (task.GapMark) after an at-most-once attempt, which the next
// attempt starts from. The local executor has it; a cluster, which does
// not run at-most-once jobs, does not.
type GapMarker interface {
	GapMarks() map[task.GapKey]int64
}

// FirstOutputer is an optional ability of an Executor: the time its sinks
// wrote their first record (zero: none yet). The engine measures recovery
// time with it when it is there, instead of when it first sees Written
// above zero.
type FirstOutputer interface {
	FirstOutput() time.Time
}

// CompletionObserver is an optional ability of an Executor: it is told the
// metadata of every checkpoint that completes (a cluster's passive standby
// workers load its state).
type CompletionObserver interface {
	Completed(m *store.Metadata)
}

// SubtaskRestarter is an optional ability of an Executor on a cluster:
// restarting single subtasks while the others run (fine-grained failover
// with upstream backup, Config.SubtaskRestarts). The failures of single
// subtasks, and of every subtask of a lost process, reach
// Failed of AttemptSpec.Options.Host instead of ending Run.
type SubtaskRestarter interface {
	// Stop stops running subtasks so that they restart with a failed one.
	Stop(ids []dataflow.SubtaskID)
	// Restart starts the given stopped or failed subtasks again from
	// checkpoint m (nil: with empty state), in their process or, when it
	// was lost, in another. The channel it returns is closed once they
	// restored their state and asked for their replays (or Run ended).
	Restart(ctx context.Context, ids []dataflow.SubtaskID, m *store.Metadata, attempt int) (<-chan struct{}, error)
}

// Snapshot is a subtask's snapshot once stored: its handle in the store,
// or the error that kept it from being taken or stored.
type Snapshot struct {
	Result task.SnapshotResult
	Handle store.Handle
	Err    error
}

// FailedTogether is an ability of the task.Host the engine hands an
// executor under subtask failover (AttemptSpec.Options.Host), found by
// type assertion: it reports subtasks that failed of one cause at once,
// a lost worker's, so that they restart as one recovery whatever the
// load. Reported one by one, a failure that reached the engine after the
// restart of the others began was a second recovery, and the subtasks'
// active standbys took their places in two steps.
type FailedTogether interface {
	FailedTogether(ids []dataflow.SubtaskID, err error)
}

// AttemptSpec is what a Deployer needs to start an attempt.
type AttemptSpec struct {
	// Options are the runtime options: checkpoint mode, attempt number,
	// injection hooks and, under subtask failover, the Host that takes
	// the failures of single subtasks and active standbys' takeovers
	// (its snapshots and finished subtasks go to OnSnapshot and
	// OnFinished instead). Restore is left empty: the deployer reads the
	// state of checkpoint Restore, each subtask's where it runs.
	Options task.Options
	// Restore is the checkpoint to start from, or nil.
	Restore *store.Metadata
	// Plan is the plan the attempt runs: the job's, unless a live
	// rescale changed the parallelism of some of its tasks
	// (plan.Plan.WithParallelism).
	Plan *plan.Plan
	// OnSnapshot receives every stored snapshot; OnFinished every subtask
	// that finished its input. Both may be called from any goroutine and
	// block until the engine takes them or the attempt's context ends.
	OnSnapshot func(Snapshot)
	OnFinished func(dataflow.SubtaskID)
	// Adopt says that the run adopts an attempt that already runs
	// (Config.Adopt): the deployer returns an executor of the running
	// subtasks it holds for the run, if it holds them all, instead of
	// starting them from Restore. Set for the run's first attempt only.
	Adopt bool
}

// Deployer starts an attempt and returns its executor. A deployer may
// wait (for slots, say) until ctx ends.
type Deployer func(ctx context.Context, spec AttemptSpec) (Executor, error)

// StoreSnapshot writes a subtask's snapshot state into the checkpoint
// store, as every process of a job does for the subtasks it runs.
func StoreSnapshot(ctx context.Context, st *store.Checkpoints, job string, r task.SnapshotResult) Snapshot {
	s := Snapshot{Result: r, Err: r.Err}
	if r.Err == nil {
		s.Handle, s.Err = st.WriteState(ctx, job, uint64(r.Checkpoint), r.Subtask, r.State, r.Shared...)
		s.Handle.SharedBytes, s.Handle.Uploaded = r.SharedBytes, r.Uploaded
	}
	s.Result.State = nil
	return s
}

// unusableError is the failure of restoring checkpoint id because its
// state failed verification (it wraps store.ErrCorrupt): the engine then
// falls back to an older checkpoint.
type unusableError struct {
	id  uint64
	err error
}

func (u *unusableError) Error() string { return u.err.Error() }
func (u *unusableError) Unwrap() error { return u.err }

// UnusableCheckpoint returns err as the failure of restoring checkpoint
// id because its state failed verification, as ReadState reports it: an
// attempt that fails with it makes the engine mark checkpoint id unusable
// and restore the one before. A cluster's coordinator rebuilds a
// worker's report of such a failure with it.
func UnusableCheckpoint(id uint64, err error) error { return &unusableError{id: id, err: err} }

// CorruptCheckpoint reports whether err, or an error it wraps, is the
// failure of restoring a checkpoint whose state failed verification
// (from ReadState or UnusableCheckpoint, or a subtask's task.CorruptState),
// and which checkpoint it was.
func CorruptCheckpoint(err error) (uint64, bool) {
	var u *unusableError
	if errors.As(err, &u) {
		return u.id, true
	}
	var c *task.CorruptState
	if errors.As(err, &c) {
		return uint64(c.Checkpoint), true
	}
	return 0, false
}

// ReadState reads the state that restores the given subtasks of plan p
// (all of them when want is nil) from checkpoint m. A state blob that
// fails verification fails it with an error wrapping store.ErrCorrupt.
//
// When m was taken at another parallelism of some task, or by a plan
// with other operators or chaining (Rescaled), ReadState reads the
// state of the old subtasks the wanted ones take (task.Needed; every
// one when want is nil) and moves it to p's layout by operator uid and
// key group (task.Rescale): a new subtask's state comes from several old
// ones. Such a restore restores the whole job; its snapshots hold no
// channel counts. drop lets the state of the checkpoint's operators
// that p has no uid of go (--allow-non-restored-state); without it such
// state fails the restore for good.
func ReadState(ctx context.Context, st *store.Checkpoints, m *store.Metadata, p *plan.Plan, want func(dataflow.SubtaskID) bool, drop bool) (map[dataflow.SubtaskID][]byte, error) {
	rescaled := Rescaled(m, p)
	var need map[dataflow.SubtaskID]bool // of a rescaled restore of some subtasks
	if rescaled && want != nil {
		need = task.Needed(p, RestoreOrigin(m, p, drop), want)
	}
	out := map[dataflow.SubtaskID][]byte{}
	for _, ts := range m.Tasks {
		id := ts.Task
		if (!rescaled && want != nil && !want(id)) || (need != nil && !need[id]) {
			continue
		}
		var data []byte
		for _, h := range ts.Handles {
			b, err := st.ReadState(ctx, h)
			if errors.Is(err, store.ErrCorrupt) {
				return nil, &unusableError{id: m.ID, err: fmt.Errorf("restoring checkpoint %d: %w", m.ID, err)}
			}
			if err != nil {
				return nil, fmt.Errorf("restoring checkpoint %d: %w", m.ID, err)
			}
			data = append(data, b...)
		}
		out[id] = data
	}
	if !rescaled {
		return out, nil
	}
	moved, err := task.Rescale(p, RestoreOrigin(m, p, drop), out)
	if err != nil {
		return nil, &fatalError{fmt.Errorf("restoring checkpoint %d at another parallelism: %w", m.ID, err)}
	}
	if want != nil {
		maps.DeleteFunc(moved, func(id dataflow.SubtaskID, _ []byte) bool { return !want(id) })
	}
	return moved, nil
}

// Rescaled reports whether checkpoint m was taken at another parallelism
// of some task of p than p's, or by a plan whose operators (by uid) lie
// in other tasks or have other node IDs than p's, or that has operators
// p lacks or lacks some of p's.
func Rescaled(m *store.Metadata, p *plan.Plan) bool {
	if len(m.Parallelism) != len(p.Vertices) {
		return true
	}
	for _, v := range p.Vertices {
		if m.Parallelism[v.ID] != v.Parallelism {
			return true
		}
	}
	var nodes []store.Operator
	for _, v := range p.Vertices {
		for _, n := range v.Chain {
			nodes = append(nodes, store.Operator{Vertex: v.ID, ID: n.ID, UID: p.UID(n)})
		}
	}
	ops := store.WithUIDs(m.Operators)
	if len(ops) != len(nodes) {
		return true
	}
	key := func(o store.Operator) string { return fmt.Sprintf("%d/%d/%s", o.Vertex, o.ID, o.UID) }
	same := map[string]bool{}
	for _, o := range ops {
		same[key(o)] = true
	}
	for _, n := range nodes {
		if !same[key(n)] {
			return true
		}
	}
	return false
}

// RestoreOrigin says where the state of checkpoint m lies for plan p:
// each node of p takes the state of m's operator with its uid; drop lets
// the state of m's operators without a node go.
func RestoreOrigin(m *store.Metadata, p *plan.Plan, drop bool) task.Origin {
	o := task.Origin{Parallelism: m.Parallelism, Nodes: map[int]task.OldNode{}, DropUnclaimed: drop}
	byUID := map[string]int{}
	for _, v := range p.Vertices {
		for _, n := range v.Chain {
			byUID[p.UID(n)] = n.ID
		}
	}
	for _, op := range store.WithUIDs(m.Operators) {
		old := task.OldNode{Vertex: op.Vertex, ID: op.ID, Name: op.Name, UID: op.UID}
		if id, ok := byUID[op.UID]; ok {
			o.Nodes[id] = old
		} else {
			o.Unclaimed = append(o.Unclaimed, old)
		}
	}
	return o
}

// Local is the executor of an attempt in this process.
type Local struct{ *task.Runtime }

// Written sums the sinks' written records.
func (l Local) Written() int64 {
	var n int64
	for _, v := range l.Plan().Vertices {
		for i := range v.Parallelism {
			n += l.Metrics(v.ID, i).Written.Load()
		}
	}
	return n
}

// FirstOutput returns when the attempt's sinks wrote their first record.
func (l Local) FirstOutput() time.Time {
	var first int64
	for _, v := range l.Plan().Vertices {
		for i := range v.Parallelism {
			if t := l.Metrics(v.ID, i).FirstWrite.Load(); t != 0 && (first == 0 || t < first) {
				first = t
			}
		}
	}
	if first == 0 {
		return time.Time{}
	}
	return time.Unix(0, first)
}

// localDeployer runs attempts in this process with the engine's store.
func (e *engine) localDeployer(ctx context.Context, spec AttemptSpec) (Executor, error) {
	opts := spec.Options
	if spec.Plan == nil {
		spec.Plan = e.cfg.Plan
	}
	if spec.Restore != nil {
		state, err := ReadState(ctx, e.cfg.Store, spec.Restore, spec.Plan, opts.Local, e.cfg.AllowNonRestoredState)
		if err != nil {
			return nil, &fatalError{err}
		}
		opts.Restore = state
	}
	if opts.Host == nil {
		opts.Host = task.NopHost{}
	}
	opts.Host = localHost{Host: opts.Host, ctx: ctx, e: e, spec: &spec}
	rt := task.New(spec.Plan, opts)
	if e.cfg.OnAttempt != nil {
		e.cfg.OnAttempt(rt)
	}
	return &localExec{Local: Local{rt}, opts: opts, e: e}, nil
}

// localHost is the task.Host of an attempt in this process: it stores
// each snapshot and hands it, and each finished subtask, to the spec's
// callbacks; the other reports go to the host in the spec's Options.
type localHost struct {
	task.Host
	ctx  context.Context // the attempt's, for the store's writes
	e    *engine
	spec *AttemptSpec
}

func (h localHost) SnapshotTaken(r task.SnapshotResult) {
	if h.spec.OnSnapshot != nil {
		h.spec.OnSnapshot(StoreSnapshot(h.ctx, h.e.cfg.Store, h.e.cfg.Job, r))
	}
}

func (h localHost) Finished(id dataflow.SubtaskID) {
	if h.spec.OnFinished != nil {
		h.spec.OnFinished(id)
	}
}
