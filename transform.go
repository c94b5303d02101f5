package weir

import (
	"github.com/weir-stream/weir/internal/operator/transform"
	"github.com/weir-stream/weir/internal/plan"
)

// Map applies fn to every record.
func Map[In, Out any](s Stream[In], fn func(In) Out, os ...OpOption) Stream[Out] {
	n := s.p.addNode(opts("map", os), plan.Operator, 1, transform.Map(fn))
	connect(s, n, 0, plan.Forward, nil)
	return newStream[Out](s.p, n, 0)
}

// Filter keeps the records for which keep returns true.
func Filter[T any](s Stream[T], keep func(T) bool, os ...OpOption) Stream[T] {
	n := s.p.addNode(opts("filter", os), plan.Operator, 1, transform.Filter(keep))
	connect(s, n, 0, plan.Forward, nil)
	r := newStream[T](s.p, n, 0)
	r.codec = s.codec
	return r
}

// FlatMap calls fn for every record; fn emits any number of output records
// through emit, which must not be used after fn returns.
func FlatMap[In, Out any](s Stream[In], fn func(v In, emit func(Out)), os ...OpOption) Stream[Out] {
	n := s.p.addNode(opts("flatmap", os), plan.Operator, 1, transform.FlatMap(fn))
	connect(s, n, 0, plan.Forward, nil)
	return newStream[Out](s.p, n, 0)
}

// FlatMapPerSubtask is FlatMap with a function of each subtask's own:
// newFn is called once for each subtask (and again when a failure
// restarts it), on the goroutine that then calls the function it returns
// for every record of that subtask. So the function may keep what it
// learns from one record for the next — a cache, a buffer — without
// synchronization. What it keeps is not in checkpoints: a restarted
// subtask starts from what newFn makes; state that must survive a failure
// belongs in keyed or operator state.
func FlatMapPerSubtask[In, Out any](s Stream[In], newFn func() func(v In, emit func(Out)), os ...OpOption) Stream[Out] {
	n := s.p.addNode(opts("flatmap", os), plan.Operator, 1, transform.FlatMapEach(newFn))
	connect(s, n, 0, plan.Forward, nil)
	return newStream[Out](s.p, n, 0)
}
