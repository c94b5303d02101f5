package weir

import (
	"fmt"
	"sync"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/operator"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/operator/process"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// EndOfTime is the final watermark. An event-time timer registered for it
// fires once bounded input has ended.
const EndOfTime = dataflow.MaxWatermark

// TimeDomain says which clock a timer follows.
type TimeDomain int

const (
	// EventTime timers fire when the watermark reaches them.
	EventTime TimeDomain = iota
	// ProcessingTime timers fire when the wall clock reaches them.
	ProcessingTime
)

// KeyedProcessFunction processes the records of a keyed stream one at a
// time, with keyed state and timers.
//
// ProcessElement is called for every record; ctx.Key() is the record's key
// and every state handle reads and writes that key's value. An error fails
// the job.
//
// Process creates one function per subtask. A function that also
// implements StateOpener gets its Open called first, to create its state
// handles; one that registers timers implements TimerHandler.
type KeyedProcessFunction[K comparable, In, Out any] interface {
	ProcessElement(ctx *KeyedContext[K, Out], in In) error
}

// TimerHandler is implemented by keyed functions that register timers.
// OnTimer is called when a timer registered through ctx fires, with
// ctx.Key() the key it was registered for. A timer firing for a function
// without OnTimer fails the job.
type TimerHandler[K comparable, Out any] interface {
	OnTimer(ctx *KeyedContext[K, Out], timestamp int64, domain TimeDomain) error
}

// StateOpener is implemented by functions that keep keyed state. Open runs
// once per subtask before any record; it creates the state handles.
type StateOpener[K comparable] interface {
	Open(sc *StateContext[K]) error
}

// DeterministicFunction is an optional ability of a keyed process
// function. Deterministic returns true when, given the same records in
// the same order, the function emits the same records in the same order:
// it reads no clock, registers no processing-time timers, and its output
// depends on nothing but its records, state and event-time timers. Under
// fine-grained failover such a function's task restarts alone, and can
// have an active standby; its event-time timers of equal time then fire
// in key-hash order rather than in the timer heap's.
type DeterministicFunction interface {
	Deterministic() bool
}

// ProcessFunc adapts a plain function to KeyedProcessFunction.
type ProcessFunc[K comparable, In, Out any] func(ctx *KeyedContext[K, Out], in In) error

// ProcessElement calls f.
func (f ProcessFunc[K, In, Out]) ProcessElement(ctx *KeyedContext[K, Out], in In) error {
	return f(ctx, in)
}

// StateContext creates state handles for a keyed function. It is valid only
// during Open.
type StateContext[K comparable] struct {
	core          *keyed.Core[K]
	deterministic bool // the function is a DeterministicFunction that says so
	err           error
}

func (sc *StateContext[K]) setErr(err error) {
	if sc.err == nil {
		sc.err = err
	}
}

// KeyedContext is what a keyed function sees while it handles a record or a
// timer. It is valid only during that call.
type KeyedContext[K comparable, Out any] struct {
	core    *keyed.Core[K]
	out     task.Collector[Out]
	ordered bool // a deterministic function under task.Context.Ordered
	side    sideEmitter
}

// Key returns the current key.
func (c *KeyedContext[K, Out]) Key() K { return c.core.Key }

// Timestamp returns the current record's event time, or the timer's time.
func (c *KeyedContext[K, Out]) Timestamp() int64 { return c.core.TS }

// Watermark returns the operator's current event-time watermark.
func (c *KeyedContext[K, Out]) Watermark() int64 { return c.core.WM }

// ProcessingTime returns the wall-clock time in epoch milliseconds.
func (c *KeyedContext[K, Out]) ProcessingTime() int64 { return c.core.Now() }

func (c *KeyedContext[K, Out]) sideEmitter() *sideEmitter { return &c.side }

// Emit sends v downstream with the current timestamp.
func (c *KeyedContext[K, Out]) Emit(v Out) { c.out.Collect(c.core.TS, v) }

// EmitAt sends v downstream with event time ts.
func (c *KeyedContext[K, Out]) EmitAt(ts int64, v Out) { c.out.Collect(ts, v) }

// RegisterEventTimer asks for OnTimer when the watermark reaches t, for the
// current key. Registering the same (key, t) twice fires once.
func (c *KeyedContext[K, Out]) RegisterEventTimer(t int64) { c.core.Events.Register(t, c.core.Key) }

// DeleteEventTimer cancels the current key's event-time timer at t.
func (c *KeyedContext[K, Out]) DeleteEventTimer(t int64) { c.core.Events.Delete(t, c.core.Key) }

// RegisterProcessingTimer asks for OnTimer when the wall clock reaches t
// (epoch milliseconds), for the current key.
func (c *KeyedContext[K, Out]) RegisterProcessingTimer(t int64) {
	if c.ordered {
		task.Failf("%s: a function that says it is deterministic registered a processing-time timer", c.core.Name)
	}
	c.core.Procs.Register(t, c.core.Key)
}

// DeleteProcessingTimer cancels the current key's processing-time timer at t.
func (c *KeyedContext[K, Out]) DeleteProcessingTimer(t int64) { c.core.Procs.Delete(t, c.core.Key) }

// Process applies a keyed process function to ks. newFn is called once per
// subtask. F is the type newFn returns: the interface itself or a type
// implementing it, such as func() *MyFunction, whose ProcessElement
// method gives Out, so no type argument needs to be written.
func Process[K comparable, In, Out any, F KeyedProcessFunction[K, In, Out]](ks KeyedStream[K, In], newFn func() F, os ...OpOption) Stream[Out] {
	so := newSideOutputs()
	node := &process.Node[K, In, Out, *KeyedContext[K, Out]]{Key: ks.key, Hooks: processHooks[K, In, Out](so),
		New: func() process.Function[*KeyedContext[K, Out], In] { return newFn() }}
	// A function made for the purpose answers once.
	node.Det = sync.OnceValue(func() bool {
		d, ok := any(newFn()).(DeterministicFunction)
		return ok && d.Deterministic()
	})
	n := ks.s.p.addNode(opts("process", os), plan.Operator, 1, node)
	ks.s.p.attachSides(n, so)
	ks.s.p.eventTimeRole(n, maySetTime, "")
	node.Keys = connectKeyed(ks, n, 0)
	return newStream[Out](ks.s.p, n, 0)
}

// processHooks connects the process operator to the functions of this
// API: the context they see, their state (StateOpener) and their timers
// (TimerHandler), and its side outputs so.
func processHooks[K comparable, In, Out any](so *sideOutputs) process.Hooks[K, In, Out, *KeyedContext[K, Out]] {
	return process.Hooks[K, In, Out, *KeyedContext[K, Out]]{
		Context: func(core *keyed.Core[K], outs []any, ordered bool) *KeyedContext[K, Out] {
			c := &KeyedContext[K, Out]{core: core, out: operator.Out[Out](outs, 0), ordered: ordered}
			c.side = sideEmitter{so: so, outs: outs, ts: func() int64 { return core.TS }, name: core.Name}
			return c
		},
		Open: func(fn process.Function[*KeyedContext[K, Out], In], core *keyed.Core[K]) error {
			o, ok := fn.(StateOpener[K])
			if !ok {
				return nil
			}
			d, ok := fn.(DeterministicFunction)
			sc := &StateContext[K]{core: core, deterministic: ok && d.Deterministic()}
			if err := o.Open(sc); err != nil {
				return err
			}
			return sc.err
		},
		OnTimer: func(fn process.Function[*KeyedContext[K, Out], In], ctx *KeyedContext[K, Out], t int64, processing bool) error {
			d := EventTime
			if processing {
				d = ProcessingTime
			}
			return fireTimer(fn, ctx, t, d)
		},
	}
}

// fireTimer calls fn's OnTimer, or fails when fn has none (it registered
// a timer without implementing TimerHandler).
func fireTimer[K comparable, Out any](fn any, ctx *KeyedContext[K, Out], t int64, d TimeDomain) error {
	h, ok := fn.(TimerHandler[K, Out])
	if !ok {
		return fmt.Errorf("a timer fired but the function has no OnTimer (implement weir.TimerHandler)")
	}
	return h.OnTimer(ctx, t, d)
}
