package weir

import (
	"fmt"
	"reflect"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/operator"
	"github.com/weir-stream/weir/internal/operator/opstate"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// CheckpointedFunction processes the records of a stream without keys,
// keeping operator state: lists per subtask that checkpoints store
// (Flink's CheckpointedFunction with operator ListState).
//
// ProcessOperator creates one function per subtask. Before any record
// Open is called, which creates the lists (NewOperatorListState,
// NewUnionListState); a restored subtask finds them filled. Before each
// checkpoint's snapshot SnapshotState is called, on the same goroutine
// as ProcessElement, to write into the lists what the function holds
// elsewhere. A function that also implements InputEnder hears of the end
// of bounded input. An error fails the job.
type CheckpointedFunction[In, Out any] interface {
	Open(oc *OperatorStateContext) error
	ProcessElement(ctx *OperatorContext[Out], in In) error
	SnapshotState(checkpoint int64) error
}

// InputEnder is implemented by functions of ProcessOperator that act at
// the end of bounded input (a buffer flushing what it holds). EndInput is
// called once, after the last record.
type InputEnder[Out any] interface {
	EndInput(ctx *OperatorContext[Out]) error
}

// OperatorStateContext creates operator state handles. It is valid only
// during Open.
type OperatorStateContext struct {
	store *opstate.Store
	err   error
}

// OperatorContext is what a CheckpointedFunction sees while it handles a
// record. It is valid only during that call.
type OperatorContext[Out any] struct {
	out      task.Collector[Out]
	ts       int64
	subtask  int
	parallel int
}

// Timestamp returns the current record's event time.
func (c *OperatorContext[Out]) Timestamp() int64 { return c.ts }

// Subtask returns the index of the function's subtask, of Parallelism.
func (c *OperatorContext[Out]) Subtask() int { return c.subtask }

// Parallelism returns the operator's number of subtasks.
func (c *OperatorContext[Out]) Parallelism() int { return c.parallel }

// Emit sends v downstream with the current timestamp.
func (c *OperatorContext[Out]) Emit(v Out) { c.out.Collect(c.ts, v) }

// EmitAt sends v downstream with event time ts.
func (c *OperatorContext[Out]) EmitAt(ts int64, v Out) { c.out.Collect(ts, v) }

// OperatorListState is a list that one subtask of an operator keeps
// (operator state, not keyed). Its elements need a codec (codec.For).
type OperatorListState[V any] struct {
	items []V
	c     codec.Codec[V]
}

// NewOperatorListState creates the list name whose elements are split
// evenly among the subtasks when a checkpoint restores at another
// parallelism (Flink's getListState): the lists of all old subtasks are
// concatenated in subtask order and new subtask j of n takes elements
// [j·len/n, (j+1)·len/n). At the same parallelism each subtask gets its
// own list back. This is the redistribution to choose by default.
func NewOperatorListState[V any](oc *OperatorStateContext, name string) *OperatorListState[V] {
	return newOperatorList[V](oc, name, false)
}

// NewUnionListState creates the list name that every subtask restores
// whole from every old subtask when a checkpoint restores at another
// parallelism (Flink's getUnionListState): each new subtask gets the
// concatenation of all old subtasks' lists and picks what it needs (a
// source's partitions by its index). At the same parallelism each
// subtask gets its own list back.
func NewUnionListState[V any](oc *OperatorStateContext, name string) *OperatorListState[V] {
	return newOperatorList[V](oc, name, true)
}

func newOperatorList[V any](oc *OperatorStateContext, name string, union bool) *OperatorListState[V] {
	l := &OperatorListState[V]{}
	c, err := codec.For[V]()
	if err != nil {
		oc.fail(fmt.Errorf("operator state %q: values of type %v cannot be checkpointed: %w", name, reflect.TypeFor[V](), err))
		return l
	}
	l.c = c
	oc.fail(oc.store.Register(name, l, union))
	return l
}

func (oc *OperatorStateContext) fail(err error) {
	if oc.err == nil {
		oc.err = err
	}
}

// Get returns the list; the caller must not change it.
func (l *OperatorListState[V]) Get() []V { return l.items }

// Add appends v.
func (l *OperatorListState[V]) Add(v V) { l.items = append(l.items, v) }

// Update replaces the list with a copy of vs.
func (l *OperatorListState[V]) Update(vs []V) { l.items = append([]V(nil), vs...) }

// Clear empties the list.
func (l *OperatorListState[V]) Clear() { l.items = nil }

// Encode appends each element's encoding (opstate.List).
func (l *OperatorListState[V]) Encode(dst [][]byte) [][]byte {
	for _, v := range l.items {
		dst = append(dst, l.c.Append(nil, v))
	}
	return dst
}

// Decode sets the elements from their encodings (opstate.List).
func (l *OperatorListState[V]) Decode(items [][]byte) error {
	l.items = make([]V, len(items))
	for i, b := range items {
		if _, err := l.c.Decode(b, &l.items[i]); err != nil {
			return err
		}
	}
	return nil
}

// ProcessOperator applies a function with operator state to s, a stream
// without keys (see CheckpointedFunction). newFn is called once per
// subtask.
//
// F is the type newFn returns: the interface itself or a type
// implementing it, such as *MyFunction, so no type argument needs to be
// written.
func ProcessOperator[In, Out any, F CheckpointedFunction[In, Out]](s Stream[In], newFn func() F, os ...OpOption) Stream[Out] {
	node := &opstate.Node[In]{New: func(ctx *task.Context, outs []any) opstate.Function[In] {
		return &checkpointed[In, Out]{fn: newFn(),
			ctx: &OperatorContext[Out]{out: operator.Out[Out](outs, 0), subtask: ctx.Subtask, parallel: ctx.Parallelism}}
	}}
	n := s.p.addNode(opts("process-operator", os), plan.Operator, 1, node)
	s.p.eventTimeRole(n, maySetTime, "")
	connect(s, n, 0, plan.Forward, nil)
	return newStream[Out](s.p, n, 0)
}

// checkpointed adapts a CheckpointedFunction to opstate.Function.
type checkpointed[In, Out any] struct {
	fn  CheckpointedFunction[In, Out]
	ctx *OperatorContext[Out]
}

func (c *checkpointed[In, Out]) Open(s *opstate.Store) error {
	oc := &OperatorStateContext{store: s}
	if err := c.fn.Open(oc); err != nil {
		return err
	}
	return oc.err
}

func (c *checkpointed[In, Out]) Collect(ts int64, in In) error {
	c.ctx.ts = ts
	return c.fn.ProcessElement(c.ctx, in)
}

func (c *checkpointed[In, Out]) Snapshot(id int64) error { return c.fn.SnapshotState(id) }

func (c *checkpointed[In, Out]) EndInput() error {
	if e, ok := c.fn.(InputEnder[Out]); ok {
		return e.EndInput(c.ctx)
	}
	return nil
}
