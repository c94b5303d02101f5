package weir

import (
	"fmt"
	"sync"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/operator"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/operator/ordered"
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
	core *keyed.Core[K]
	err  error
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
}

// Key returns the current key.
func (c *KeyedContext[K, Out]) Key() K { return c.core.Key }

// Timestamp returns the current record's event time, or the timer's time.
func (c *KeyedContext[K, Out]) Timestamp() int64 { return c.core.TS }

// Watermark returns the operator's current event-time watermark.
func (c *KeyedContext[K, Out]) Watermark() int64 { return c.core.WM }

// ProcessingTime returns the wall-clock time in epoch milliseconds.
func (c *KeyedContext[K, Out]) ProcessingTime() int64 { return c.core.Now() }

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
// subtask.
func Process[K comparable, In, Out any](ks KeyedStream[K, In], newFn func() KeyedProcessFunction[K, In, Out], os ...OpOption) Stream[Out] {
	node := &processNode[K, In, Out]{key: ks.key, newFn: newFn}
	// A function made for the purpose answers once.
	node.det = sync.OnceValue(func() bool {
		d, ok := newFn().(DeterministicFunction)
		return ok && d.Deterministic()
	})
	n := ks.s.p.addNode(opts("process", os), plan.Operator, 1, node)
	node.keys = connectKeyed(ks, n, 0)
	return newStream[Out](ks.s.p, n, 0)
}

type processNode[K comparable, In, Out any] struct {
	key   func(In) K
	keys  keyed.Keys[K]
	newFn func() KeyedProcessFunction[K, In, Out]
	det   func() bool
}

// Deterministic reports whether the function says it is (see
// DeterministicFunction).
func (p *processNode[K, In, Out]) Deterministic() bool { return p.det() }

func (p *processNode[K, In, Out]) Build(ctx *task.Context, outs []any) (task.Built, error) {
	op := &processOp[K, In, Out]{key: p.key, fn: p.newFn()}
	op.core = keyed.NewCore[K](ctx, p.keys)
	op.ctx = KeyedContext[K, Out]{core: op.core, out: operator.Out[Out](outs, 0), ordered: ctx.Ordered && p.Deterministic()}
	return task.Built{Op: op, Inputs: []any{op}}, nil
}

type processOp[K comparable, In, Out any] struct {
	task.Base
	core *keyed.Core[K]
	key  func(In) K
	fn   KeyedProcessFunction[K, In, Out]
	ctx  KeyedContext[K, Out]
	due  ordered.Timers[K]
}

// Snapshot freezes the operator's keyed state and timers.
func (p *processOp[K, In, Out]) Snapshot() (func() []byte, error) { return p.core.Snapshot() }

// Restore loads the operator's keyed state and timers before Open.
func (p *processOp[K, In, Out]) Restore(data []byte) error { return p.core.Restore(data) }

func (p *processOp[K, In, Out]) Open(*task.Context) error {
	if err := p.core.Open(); err != nil {
		return err
	}
	if o, ok := p.fn.(StateOpener[K]); ok {
		sc := &StateContext[K]{core: p.core}
		if err := o.Open(sc); err != nil {
			return err
		}
		return sc.err
	}
	return nil
}

func (p *processOp[K, In, Out]) Collect(ts int64, v In) {
	p.core.SetKey(p.key(v))
	p.core.TS = ts
	if err := p.fn.ProcessElement(&p.ctx, v); err != nil {
		task.Fail(fmt.Errorf("%s: %w", p.core.Name, err))
	}
}

func (p *processOp[K, In, Out]) Watermark(wm int64) int64 {
	if p.ctx.ordered {
		p.watermarkOrdered(wm)
		return wm
	}
	for {
		t, k, ok := p.core.Events.PopDue(wm)
		if !ok {
			break
		}
		p.fireEvent(t, k)
	}
	p.core.WM = wm
	return wm
}

func (p *processOp[K, In, Out]) fireEvent(t int64, k K) {
	p.core.SetKey(k)
	p.core.TS = t
	if err := p.onTimer(t, EventTime); err != nil {
		task.Fail(fmt.Errorf("%s: event timer: %w", p.core.Name, err))
	}
}

// watermarkOrdered fires the due event-time timers by time, then key hash
// and encoding (package ordered).
func (p *processOp[K, In, Out]) watermarkOrdered(wm int64) {
	p.due.Fire(p.core.Events, wm, p.core.Keys.Hash, ordered.ByEncoding(p.core.Keys.Codec), p.fireEvent)
	p.core.WM = wm
}

func (p *processOp[K, In, Out]) NextProcessingTime() (int64, bool) { return p.core.Procs.Next() }

func (p *processOp[K, In, Out]) FireProcessingTime(now int64) {
	for {
		t, k, ok := p.core.Procs.PopDue(now)
		if !ok {
			return
		}
		p.core.SetKey(k)
		p.core.TS = t
		if err := p.onTimer(t, ProcessingTime); err != nil {
			task.Fail(fmt.Errorf("%s: processing timer: %w", p.core.Name, err))
		}
	}
}

// onTimer hands a fired timer to the function.
func (p *processOp[K, In, Out]) onTimer(t int64, d TimeDomain) error {
	h, ok := p.fn.(TimerHandler[K, Out])
	if !ok {
		return fmt.Errorf("a timer fired but the function has no OnTimer (implement weir.TimerHandler)")
	}
	return h.OnTimer(&p.ctx, t, d)
}
