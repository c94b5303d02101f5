package weir

import (
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/state"
	"github.com/weir-stream/weir/internal/task"
)

// WindowedStream is a keyed stream grouped into event-time windows. Apply
// AggregateWindow, ReduceWindow or ProcessWindow to compute a result per key
// and window.
type WindowedStream[K comparable, T any] struct {
	ks       KeyedStream[K, T]
	assigner WindowAssigner
	lateness int64
	late     *OutputTag[T]
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
// side output tag, instead of dropping them.
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
	emit := func(k K, win Window, acc Acc, out func(Windowed[K, Out])) {
		out(Windowed[K, Out]{Key: k, Window: win, Value: agg.Result(acc)})
	}
	return windowOp(w, agg.Create, agg.Add, agg.Merge, emit, opts("window-aggregate", os))
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
	emit := func(k K, win Window, a acc, out func(Windowed[K, T])) {
		out(Windowed[K, T]{Key: k, Window: win, Value: a.V})
	}
	return windowOp(w, func() acc { return acc{} }, add, merge, emit, opts("window-reduce", os))
}

// ProcessWindow collects each key's records per window and calls fn with
// all of them when the window fires. fn emits any number of results.
func ProcessWindow[K comparable, T, Out any](w WindowedStream[K, T], fn func(key K, win Window, records []T, emit func(Out)) error, os ...OpOption) Stream[Out] {
	add := func(l []T, v T) []T { return append(l, v) }
	merge := func(a, b []T) []T { return append(append([]T(nil), a...), b...) }
	emit := func(k K, win Window, l []T, out func(Out)) {
		if err := fn(k, win, l, out); err != nil {
			task.Fail(fmt.Errorf("window function for key %v, window [%d, %d): %w", k, win.Start, win.End, err))
		}
	}
	return windowOp(w, func() []T { return nil }, add, merge, emit, opts("window-process", os))
}

// windowOp adds a window operator folding records into accumulators.
func windowOp[K comparable, T, Acc, Out any](w WindowedStream[K, T], create func() Acc, add func(Acc, T) Acc,
	merge func(Acc, Acc) Acc, emit func(K, Window, Acc, func(Out)), c opConfig) Stream[Out] {
	p := w.ks.s.p
	node := &windowNode[K, T, Acc, Out]{key: w.ks.key, assigner: w.assigner, lateness: w.lateness,
		create: create, add: add, merge: merge, emit: emit}
	n := p.addNode(c, plan.Operator, 2, node)
	connectKeyed(w.ks, n, 0)
	if w.late != nil {
		w.late.bind(p, n, 1)
	}
	return newStream[Out](p, n, 0)
}

// winKey addresses one window of one key in state and timers.
type winKey[K comparable] struct {
	Key K
	Win Window
}

type windowNode[K comparable, T, Acc, Out any] struct {
	key      func(T) K
	assigner WindowAssigner
	lateness int64
	create   func() Acc
	add      func(Acc, T) Acc
	merge    func(Acc, Acc) Acc
	emit     func(K, Window, Acc, func(Out))
}

func (n *windowNode[K, T, Acc, Out]) Build(ctx *task.Context, outs []any) (task.Built, error) {
	if !n.assigner.Merging() {
		op := &bucketOperator[K, T, Acc, Out]{windowNode: n, next: out[Out](outs, 0), late: out[T](outs, 1),
			wm: task.MinWatermark, timers: state.NewTimers[Window](), backend: state.NewBackend(), name: ctx.Operator}
		var err error
		if op.buckets, err = state.Register[Window, map[K]Acc](op.backend, "window-buckets", nil, nil, nil); err != nil {
			return task.Built{}, err
		}
		op.out = op.collect
		return task.Built{Op: op, Inputs: []any{op}}, nil
	}
	op := &windowOperator[K, T, Acc, Out]{windowNode: n, next: out[Out](outs, 0), late: out[T](outs, 1),
		wm: task.MinWatermark, timers: state.NewTimers[winKey[K]](), backend: state.NewBackend(), name: ctx.Operator}
	var err error
	if op.contents, err = state.Register[winKey[K], Acc](op.backend, "window-contents", nil, nil, nil); err != nil {
		return task.Built{}, err
	}
	if op.sessions, err = state.Register[K, []Window](op.backend, "window-sessions", nil, nil, nil); err != nil {
		return task.Built{}, err
	}
	op.out = op.collect
	return task.Built{Op: op, Inputs: []any{op}}, nil
}

// windowOperator runs merging (session) windows, whose bounds differ per
// key: state and timers are kept per key and window.
type windowOperator[K comparable, T, Acc, Out any] struct {
	*windowNode[K, T, Acc, Out]
	task.Base
	next     task.Collector[Out]
	late     task.Collector[T]
	wm       int64
	backend  *state.Backend
	contents *state.Table[winKey[K], Acc]
	sessions *state.Table[K, []Window] // active windows per key (merging assigners)
	timers   *state.Timers[winKey[K]]
	wins     []Window // scratch
	emitTS   int64
	out      func(Out)
	name     string
}

func (o *windowOperator[K, T, Acc, Out]) collect(v Out) { o.next.Collect(o.emitTS, v) }

func (o *windowOperator[K, T, Acc, Out]) Collect(ts int64, v T) {
	if ts == NoTimestamp {
		task.Failf("%s: record without event time in an event-time window; give the source WithTimestamps", o.name)
	}
	k := o.key(v)
	o.wins = o.assigner.Assign(o.wins[:0], ts)
	merged := false
	o.wins[0], merged = o.mergeSession(k, o.wins[0])
	dropped := true
	for _, win := range o.wins {
		wk := winKey[K]{k, win}
		if cleanupTime(win, o.lateness) <= o.wm {
			if merged {
				o.clear(wk) // a session that ended before it began
			}
			continue // the window is gone
		}
		dropped = false
		acc, ok := o.contents.Get(wk)
		if !ok {
			acc = o.create()
		}
		acc = o.add(acc, v)
		o.contents.Put(wk, acc)
		if win.MaxTimestamp() <= o.wm {
			// A late record within the allowed lateness: fire the updated
			// window now; its state lives until the cleanup time.
			o.fire(wk, acc)
			o.timers.Register(cleanupTime(win, o.lateness), wk)
		} else if !ok || merged {
			o.timers.Register(win.MaxTimestamp(), wk)
		}
	}
	if dropped {
		o.late.Collect(ts, v)
	}
}

// mergeSession merges win into the key's active session windows and returns
// the window that now holds it, moving the merged windows' contents and
// timers to it.
func (o *windowOperator[K, T, Acc, Out]) mergeSession(k K, win Window) (Window, bool) {
	active, _ := o.sessions.Get(k)
	merged := win
	keep := active[:0:0]
	var absorbed []Window
	for _, a := range active {
		if a.intersects(merged) {
			merged = merged.cover(a)
			absorbed = append(absorbed, a)
		} else {
			keep = append(keep, a)
		}
	}
	// Covering may reach windows that did not touch the new record's.
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(keep); i++ {
			if keep[i].intersects(merged) {
				merged = merged.cover(keep[i])
				absorbed = append(absorbed, keep[i])
				keep = append(keep[:i], keep[i+1:]...)
				changed = true
				i--
			}
		}
	}
	if len(absorbed) > 0 {
		acc := o.create()
		has := false
		for _, a := range absorbed {
			wk := winKey[K]{k, a}
			if c, ok := o.contents.Get(wk); ok {
				if has {
					acc = o.merge(acc, c)
				} else {
					acc, has = c, true
				}
				o.contents.Delete(wk)
			}
			o.timers.Delete(a.MaxTimestamp(), wk)
			o.timers.Delete(a.MaxTimestamp()+o.lateness, wk)
		}
		if has {
			o.contents.Put(winKey[K]{k, merged}, acc)
		}
	}
	o.sessions.Put(k, append(keep, merged))
	return merged, len(absorbed) > 0
}

func (o *windowOperator[K, T, Acc, Out]) fire(wk winKey[K], acc Acc) {
	o.emitTS = wk.Win.MaxTimestamp()
	o.emit(wk.Key, wk.Win, acc, o.out)
}

// Watermark fires the windows whose end the watermark passed and clears
// those whose allowed lateness expired.
func (o *windowOperator[K, T, Acc, Out]) Watermark(wm int64) int64 {
	o.wm = wm
	for {
		t, wk, ok := o.timers.PopDue(wm)
		if !ok {
			break
		}
		acc, live := o.contents.Get(wk)
		if !live {
			continue
		}
		if t == wk.Win.MaxTimestamp() {
			o.fire(wk, acc)
		}
		if cleanup := cleanupTime(wk.Win, o.lateness); cleanup <= wm {
			o.clear(wk)
		} else {
			o.timers.Register(cleanupTime(wk.Win, o.lateness), wk)
		}
	}
	return wm
}

func (o *windowOperator[K, T, Acc, Out]) clear(wk winKey[K]) {
	o.contents.Delete(wk)
	active, _ := o.sessions.Get(wk.Key)
	for i, a := range active {
		if a == wk.Win {
			active = append(active[:i], active[i+1:]...)
			break
		}
	}
	if len(active) == 0 {
		o.sessions.Delete(wk.Key)
	} else {
		o.sessions.Put(wk.Key, active)
	}
}

// OutputTag names a side output of records of type T, such as late data
// of a window.
type OutputTag[T any] struct {
	name string
	p    *Pipeline
	node *plan.Node
	port int
}

// NewOutputTag returns a tag for a side output.
func NewOutputTag[T any](name string) *OutputTag[T] { return &OutputTag[T]{name: name} }

func (t *OutputTag[T]) bind(p *Pipeline, n *plan.Node, port int) {
	t.p, t.node, t.port = p, n, port
}

// SideOutput returns the stream of a side output. The operator writing to
// the tag must have been added to the pipeline before.
func SideOutput[T any](tag *OutputTag[T]) Stream[T] {
	if tag.node == nil {
		panic(fmt.Sprintf("weir: side output %q is not attached to an operator yet", tag.name))
	}
	return newStream[T](tag.p, tag.node, tag.port)
}
