package engine

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

var _ Reshaper = (*localExec)(nil)

// localExec is the executor of an attempt in this process: its first
// runtime, and the successors that live rescales started (each runs the
// subtasks of its rescale's cone; reshape.go). A subtask belongs to the
// newest runtime that runs its vertex.
type localExec struct {
	Local // the first runtime
	opts  task.Options
	e     *engine

	mu      sync.Mutex
	ctx     context.Context // Run's, while it runs
	cancel  context.CancelCauseFunc
	ended   bool
	later   []*task.Runtime // successors started, oldest first
	next    *task.Runtime   // the successor prepared, not yet started
	owners  map[int]*task.Runtime
	runs    sync.WaitGroup
	firstEr error
}

// Run runs the first runtime and every successor started meanwhile until
// all ended; the first failure of any cancels the others.
func (l *localExec) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	l.mu.Lock()
	l.ctx, l.cancel = ctx, cancel
	l.mu.Unlock()
	err := l.Local.Runtime.Run(ctx)
	l.fail(err)
	l.mu.Lock()
	l.ended = true // no successor starts from now on
	l.mu.Unlock()
	l.runs.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.firstEr
}

// fail records err as the executor's failure if it is the first, and
// cancels every runtime.
func (l *localExec) fail(err error) {
	if err == nil {
		return
	}
	l.mu.Lock()
	if l.firstEr == nil {
		l.firstEr = err
	}
	cancel := l.cancel
	l.mu.Unlock()
	cancel(err)
}

// PrepareReshape creates the successor that runs the cone of p and
// readies the running runtimes' subtasks for checkpoint at. When the
// cone's state can pass in memory (task.CanHandOver), the successor
// starts now and takes it from the retired subtasks at the barrier; it
// returns the successor's Restored channel then.
func (l *localExec) PrepareReshape(at int64, p *plan.Plan, cone map[int]bool) (<-chan struct{}, error) {
	opts := l.opts
	opts.Local = func(id dataflow.SubtaskID) bool { return cone[id.Vertex] }
	next := task.NewSuccessor(p, opts, at)
	handover := task.CanHandOver(l.opts, p, cone)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.next != nil {
		return nil, errors.New("a rescale is prepared already")
	}
	if handover {
		if l.ended || l.ctx == nil {
			return nil, errors.New("the attempt ended")
		}
		next.ExpectHandOver(l.newest())
	} else {
		l.next = next
	}
	for _, rt := range l.all() {
		rt.PrepareReshape(at, next, cone)
	}
	if !handover {
		return nil, nil
	}
	l.startLocked(next, nil)
	return next.Restored(), nil
}

// StartReshape runs the prepared successor from checkpoint m, which it
// reads first: a failure to read it fails the attempt.
func (l *localExec) StartReshape(m *store.Metadata) (<-chan struct{}, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	next := l.next
	if next == nil {
		return nil, errors.New("no rescale is prepared")
	}
	if l.ended || l.ctx == nil {
		return nil, errors.New("the attempt ended")
	}
	l.next = nil
	e := l.e
	l.startLocked(next, func(ctx context.Context) error {
		state, err := ReadState(ctx, e.cfg.Store, m, next.Plan(), next.IsLocal, e.cfg.AllowNonRestoredState)
		if err != nil {
			return err
		}
		next.SetRestore(state)
		return nil
	})
	return next.Restored(), nil
}

// startLocked makes next the runtime of its vertices and runs it, after
// prepare if not nil; l.mu is held.
func (l *localExec) startLocked(next *task.Runtime, prepare func(context.Context) error) {
	if l.owners == nil {
		l.owners = map[int]*task.Runtime{}
	}
	for _, v := range next.Plan().Vertices {
		if next.IsLocal(dataflow.SubtaskID{Vertex: v.ID}) {
			l.owners[v.ID] = next
		}
	}
	l.later = append(l.later, next)
	if f := l.e.cfg.OnSuccessor; f != nil {
		f(next) // under l.mu: before Run returns, so before the next attempt's OnAttempt
	}
	ctx := l.ctx
	l.runs.Add(1)
	go func() {
		defer l.runs.Done()
		if prepare != nil {
			if err := prepare(ctx); err != nil {
				l.fail(err)
				return
			}
		}
		l.fail(next.Run(ctx))
	}()
}

// newest returns the plan the attempt runs now: the newest runtime's,
// whose plan has every vertex at its current parallelism; l.mu is held.
func (l *localExec) newest() *plan.Plan {
	if n := len(l.later); n > 0 {
		return l.later[n-1].Plan()
	}
	return l.Local.Plan()
}

// all returns every runtime, the first one first; l.mu is held.
func (l *localExec) all() []*task.Runtime {
	return append([]*task.Runtime{l.Local.Runtime}, l.later...)
}

func (l *localExec) runtimes() []*task.Runtime {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all()
}

// owner returns the runtime that runs subtask id now.
func (l *localExec) owner(id dataflow.SubtaskID) *task.Runtime {
	l.mu.Lock()
	defer l.mu.Unlock()
	if rt, ok := l.owners[id.Vertex]; ok {
		return rt
	}
	return l.Local.Runtime
}

func (l *localExec) Kill(id dataflow.SubtaskID, err error) { l.owner(id).Kill(id, err) }

func (l *localExec) Trigger(id int64, how task.TriggerOptions) {
	for _, rt := range l.runtimes() {
		rt.Trigger(id, how)
	}
}

func (l *localExec) TriggerSubtask(sid dataflow.SubtaskID, id int64) {
	l.owner(sid).TriggerSubtask(sid, id)
}

func (l *localExec) Complete(id int64) {
	for _, rt := range l.runtimes() {
		rt.Complete(id)
	}
}

func (l *localExec) Abort(id int64) {
	for _, rt := range l.runtimes() {
		rt.Abort(id)
	}
}

func (l *localExec) Release() {
	for _, rt := range l.runtimes() {
		rt.Release()
	}
}

func (l *localExec) Finished(id dataflow.SubtaskID) bool { return l.owner(id).Finished(id) }

func (l *localExec) AwaitCompleted(ctx context.Context, id int64) error {
	for _, rt := range l.runtimes() {
		if err := rt.AwaitCompleted(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

func (l *localExec) Positions() map[dataflow.SubtaskID][]byte {
	out := map[dataflow.SubtaskID][]byte{}
	for _, rt := range l.runtimes() {
		maps.Copy(out, rt.Positions())
	}
	return out
}

func (l *localExec) Written() int64 {
	var n int64
	for _, rt := range l.runtimes() {
		n += Local{rt}.Written()
	}
	return n
}

func (l *localExec) FirstOutput() time.Time {
	var first time.Time
	for _, rt := range l.runtimes() {
		if t := (Local{rt}).FirstOutput(); !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first
}

func (l *localExec) Activity() Activity {
	var a Activity
	for _, rt := range l.runtimes() {
		b := Local{rt}.Activity()
		a.Records += b.Records
		a.SourceIdle += b.SourceIdle
		a.IdleKnown = b.IdleKnown
	}
	return a
}

func (l *localExec) Waits(timeout time.Duration) []task.SubtaskWait {
	var out []task.SubtaskWait
	for _, rt := range l.runtimes() {
		out = append(out, rt.Waits(timeout)...)
	}
	return out
}
