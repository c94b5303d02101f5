package weir

import (
	"time"

	"github.com/weir-stream/weir/internal/operator/window"
	"github.com/weir-stream/weir/internal/plan"
)

// WindowedStream is a keyed stream grouped into windows (of event time,
// processing time, or counts). Apply
// AggregateWindow, ReduceWindow or ProcessWindow to compute a result per key
// and window.
type WindowedStream[K comparable, T any] struct {
	ks       KeyedStream[K, T]
	assigner WindowAssigner
	lateness int64
	late     *OutputTag[T]
	trigger  Trigger[T]
	evictor  Evictor[T]
}

// WindowBy groups a keyed stream into windows chosen by a (Tumbling,
// Sliding or Session).
func WindowBy[K comparable, T any](ks KeyedStream[K, T], a WindowAssigner) WindowedStream[K, T] {
	if v, ok := a.(interface{ validate() error }); ok {
		if err := v.validate(); err != nil {
			ks.s.p.setErr(err)
		}
	}
	return WindowedStream[K, T]{ks: ks, assigner: a}
}

// AllowedLateness keeps a window's state for d after the watermark passed
// its end. A record arriving in that time updates the window, which fires
// again with the updated result. Later records are dropped, or sent to the
// late-data side output.
func (w WindowedStream[K, T]) AllowedLateness(d time.Duration) WindowedStream[K, T] {
	w.lateness = d.Milliseconds()
	return w
}

// LateTo sends records too late for every window they belong to to the
// side output tag, instead of dropping them. Records dropped for want of
// a side output are counted in TaskMetrics.LateDropped
// (weir_late_records_dropped_total).
func (w WindowedStream[K, T]) LateTo(tag *OutputTag[T]) WindowedStream[K, T] {
	w.late = tag
	return w
}

// Windowed is the result of a window for a key.
type Windowed[K comparable, V any] struct {
	Key    K
	Window Window
	Value  V
}

// AggregateWindow folds each key's records per window with agg and emits
// one Windowed result per key and window when the window fires.
func AggregateWindow[K comparable, T, Acc, Out any](w WindowedStream[K, T], agg Aggregator[T, Acc, Out], os ...OpOption) Stream[Windowed[K, Out]] {
	emit := func(k K, win window.Window, acc Acc, out func(Windowed[K, Out])) {
		out(Windowed[K, Out]{Key: k, Window: Window(win), Value: agg.Result(acc)})
	}
	return windowOp(w, agg.Create, agg.Add, agg.Merge, emit, opts("window-aggregate", os), nil)
}

// ReduceWindow folds each key's records per window with reduce.
func ReduceWindow[K comparable, T any](w WindowedStream[K, T], reduce func(a, b T) T, os ...OpOption) Stream[Windowed[K, T]] {
	type acc struct {
		V   T
		Set bool
	}
	add := func(a acc, v T) acc {
		if !a.Set {
			return acc{v, true}
		}
		return acc{reduce(a.V, v), true}
	}
	merge := func(a, b acc) acc {
		if !a.Set {
			return b
		}
		if !b.Set {
			return a
		}
		return acc{reduce(a.V, b.V), true}
	}
	emit := func(k K, win window.Window, a acc, out func(Windowed[K, T])) {
		out(Windowed[K, T]{Key: k, Window: Window(win), Value: a.V})
	}
	return windowOp(w, func() acc { return acc{} }, add, merge, emit, opts("window-reduce", os), nil)
}

// ProcessWindow collects each key's records per window and calls fn with
// all of them when the window fires. fn emits any number of results.
// ProcessWindowWithContext gives the function side outputs too.
func ProcessWindow[K comparable, T, Out any](w WindowedStream[K, T], fn func(key K, win Window, records []T, emit func(Out)) error, os ...OpOption) Stream[Out] {
	return ProcessWindowWithContext(w, func(ctx *WindowContext[K, Out], records []T) error {
		return fn(ctx.key, ctx.win, records, ctx.emit)
	}, os...)
}

// windowOp adds a window operator folding records into accumulators.
// newEmit, if not nil, returns the emit of one subtask, which may emit
// to side outputs so through outs, stamped with what stamp returns (the
// event time of the main output's records of the firing).
func windowOp[K comparable, T, Acc, Out any](w WindowedStream[K, T], create func() Acc, add func(Acc, T) Acc,
	merge func(Acc, Acc) Acc, emit func(K, window.Window, Acc, func(Out)), c opConfig,
	newEmit func(so *sideOutputs, outs []any, stamp func() int64) func(K, window.Window, Acc, func(Out))) Stream[Out] {
	p := w.ks.s.p
	node := &window.Node[K, T, Acc, Out]{Key: w.ks.key, Assign: assignFunc(w.assigner), Merging: w.assigner.Merging(),
		Lateness: w.lateness, Create: create, Add: add, Merge: merge, Emit: emit}
	role, what, err := configure(w, node)
	if err != nil {
		p.setErr(err)
	}
	n := p.addNode(c, plan.Operator, 2, node)
	so := p.sideOutputs(n) // late data, and what the function emits with Output
	p.eventTimeRole(n, role, what)
	node.Keys = connectKeyed(w.ks, n, 0)
	if w.late != nil {
		w.late.bind(p, n, 1)
	}
	if newEmit != nil {
		node.NewEmit = func(outs []any, stamp func() int64) func(K, window.Window, Acc, func(Out)) {
			return newEmit(so, outs, stamp)
		}
	}
	return newStream[Out](p, n, 0)
}
