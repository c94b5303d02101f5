package weir

import (
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// Map applies fn to every record.
func Map[In, Out any](s Stream[In], fn func(In) Out, os ...OpOption) Stream[Out] {
	n := s.p.addNode(opts("map", os), plan.Operator, 1, &mapNode[In, Out]{fn: fn})
	connect(s, n, 0, plan.Forward, nil)
	return newStream[Out](s.p, n, 0)
}

type mapNode[In, Out any] struct{ fn func(In) Out }

func (m *mapNode[In, Out]) Build(_ *task.Context, outs []any) (task.Built, error) {
	op := &mapOp[In, Out]{fn: m.fn, next: out[Out](outs, 0)}
	return task.Built{Op: op, Inputs: []any{op}}, nil
}

type mapOp[In, Out any] struct {
	task.Base
	fn   func(In) Out
	next task.Collector[Out]
}

func (m *mapOp[In, Out]) Collect(ts int64, v In) { m.next.Collect(ts, m.fn(v)) }

// Filter keeps the records for which keep returns true.
func Filter[T any](s Stream[T], keep func(T) bool, os ...OpOption) Stream[T] {
	n := s.p.addNode(opts("filter", os), plan.Operator, 1, &filterNode[T]{keep: keep})
	connect(s, n, 0, plan.Forward, nil)
	r := newStream[T](s.p, n, 0)
	r.codec = s.codec
	return r
}

type filterNode[T any] struct{ keep func(T) bool }

func (f *filterNode[T]) Build(_ *task.Context, outs []any) (task.Built, error) {
	op := &filterOp[T]{keep: f.keep, next: out[T](outs, 0)}
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

// FlatMap calls fn for every record; fn emits any number of output records
// through emit, which must not be used after fn returns.
func FlatMap[In, Out any](s Stream[In], fn func(v In, emit func(Out)), os ...OpOption) Stream[Out] {
	n := s.p.addNode(opts("flatmap", os), plan.Operator, 1, &flatMapNode[In, Out]{fn: fn})
	connect(s, n, 0, plan.Forward, nil)
	return newStream[Out](s.p, n, 0)
}

type flatMapNode[In, Out any] struct {
	fn func(In, func(Out))
}

func (f *flatMapNode[In, Out]) Build(_ *task.Context, outs []any) (task.Built, error) {
	op := &flatMapOp[In, Out]{fn: f.fn, next: out[Out](outs, 0)}
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
