// Package transform implements the stateless record-at-a-time operators:
// map, filter and flat map. Each calls its function once per record and
// passes the result on by a direct call, in order.
package transform

import (
	"github.com/weir-stream/weir/internal/operator"
	"github.com/weir-stream/weir/internal/task"
)

// Map returns the node that applies fn to every record.
func Map[In, Out any](fn func(In) Out) task.NodeImpl { return &mapNode[In, Out]{fn: fn} }

type mapNode[In, Out any] struct{ fn func(In) Out }

func (m *mapNode[In, Out]) Build(_ *task.Context, outs []any) (task.Built, error) {
	op := &mapOp[In, Out]{fn: m.fn, next: operator.Out[Out](outs, 0)}
	return task.Built{Op: op, Inputs: []any{op}}, nil
}

type mapOp[In, Out any] struct {
	task.Base
	fn   func(In) Out
	next task.Collector[Out]
}

func (m *mapOp[In, Out]) Collect(ts int64, v In) { m.next.Collect(ts, m.fn(v)) }

// Filter returns the node that keeps the records for which keep returns
// true.
func Filter[T any](keep func(T) bool) task.NodeImpl { return &filterNode[T]{keep: keep} }

type filterNode[T any] struct{ keep func(T) bool }

func (f *filterNode[T]) Build(_ *task.Context, outs []any) (task.Built, error) {
	op := &filterOp[T]{keep: f.keep, next: operator.Out[T](outs, 0)}
	return task.Built{Op: op, Inputs: []any{op}}, nil
}

type filterOp[T any] struct {
	task.Base
	keep func(T) bool
	next task.Collector[T]
}

func (f *filterOp[T]) Collect(ts int64, v T) {
	if f.keep(v) {
		f.next.Collect(ts, v)
	}
}

// FlatMap returns the node that calls fn for every record; fn emits any
// number of records through its second argument, with the input's event
// time.
func FlatMap[In, Out any](fn func(In, func(Out))) task.NodeImpl { return &flatMapNode[In, Out]{fn: fn} }

// FlatMapEach is FlatMap with a function made for each subtask: Build
// calls newFn, on the subtask's goroutine, and the operator calls the
// function it returned for every record.
func FlatMapEach[In, Out any](newFn func() func(In, func(Out))) task.NodeImpl {
	return &flatMapNode[In, Out]{newFn: newFn}
}

type flatMapNode[In, Out any] struct {
	fn    func(In, func(Out))
	newFn func() func(In, func(Out)) // when set, fn is made by it per subtask
}

func (f *flatMapNode[In, Out]) Build(_ *task.Context, outs []any) (task.Built, error) {
	fn := f.fn
	if f.newFn != nil {
		fn = f.newFn()
	}
	op := &flatMapOp[In, Out]{fn: fn, next: operator.Out[Out](outs, 0)}
	op.emit = op.emitOne
	return task.Built{Op: op, Inputs: []any{op}}, nil
}

type flatMapOp[In, Out any] struct {
	task.Base
	fn   func(In, func(Out))
	next task.Collector[Out]
	ts   int64
	emit func(Out) // bound once, so Collect does not allocate a closure
}

func (f *flatMapOp[In, Out]) emitOne(v Out) { f.next.Collect(f.ts, v) }

func (f *flatMapOp[In, Out]) Collect(ts int64, v In) {
	f.ts = ts
	f.fn(v, f.emit)
}

// Deterministic: a map emits one record per input record, in order.
func (*mapNode[In, Out]) Deterministic() bool { return true }

// Deterministic: a filter keeps records in order.
func (*filterNode[T]) Deterministic() bool { return true }

// Deterministic: a flat map emits its records per input record, in order.
func (*flatMapNode[In, Out]) Deterministic() bool { return true }

// CoFlatMap returns the two-input node that calls f1 for every record of
// its first input and f2 for every record of its second, both emitting
// into one output.
func CoFlatMap[In1, In2, Out any](f1 func(In1, func(Out)), f2 func(In2, func(Out))) task.NodeImpl {
	return &coFlatMapNode[In1, In2, Out]{f1: f1, f2: f2}
}

type coFlatMapNode[In1, In2, Out any] struct {
	f1 func(In1, func(Out))
	f2 func(In2, func(Out))
}

func (c *coFlatMapNode[In1, In2, Out]) Build(_ *task.Context, outs []any) (task.Built, error) {
	next := operator.Out[Out](outs, 0)
	a := &flatMapOp[In1, Out]{fn: c.f1, next: next}
	a.emit = a.emitOne
	b := &flatMapOp[In2, Out]{fn: c.f2, next: next}
	b.emit = b.emitOne
	return task.Built{Op: a, Inputs: []any{a, b}}, nil
}

// Process returns the node that calls, for every record, the function
// newFn returns for the subtask, given the operator's outputs (as Build
// receives them: port 0 the main output, the others side outputs).
func Process[In any](newFn func(outs []any) func(ts int64, v In)) task.NodeImpl {
	return &processNode[In]{newFn: newFn}
}

type processNode[In any] struct {
	newFn func(outs []any) func(ts int64, v In)
}

func (p *processNode[In]) Build(_ *task.Context, outs []any) (task.Built, error) {
	op := &processOp[In]{fn: p.newFn(outs)}
	return task.Built{Op: op, Inputs: []any{op}}, nil
}

// Deterministic: as a flat map, the function emits per input record, in
// order.
func (*processNode[In]) Deterministic() bool { return true }

type processOp[In any] struct {
	task.Base
	fn func(ts int64, v In)
}

func (p *processOp[In]) Collect(ts int64, v In) { p.fn(ts, v) }
