// Package process implements the keyed process operator, with one input
// (Node) or two sharing keyed state and timers (CoNode): it sets the
// current key and time for each record and calls the function, fires
// event-time timers as the watermark passes them (in a fixed order under
// task.Context.Ordered, see package ordered) and processing-time timers as
// the clock does. The function and the context it sees are the public
// API's; the operator knows them through the type parameter C and the
// Hooks, so a record costs one call of the function, as it would without
// the package boundary.
package process

import (
	"fmt"

	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/operator/ordered"
	"github.com/weir-stream/weir/internal/task"
)

// Function handles the records of an input, with C the context a
// function sees (the public API's keyed context).
type Function[C, In any] interface {
	ProcessElement(ctx C, in In) error
}

// Second handles the records of a two-input operator's second input.
type Second[C, In any] interface {
	ProcessElement2(ctx C, in In) error
}

// Hooks are what the operator asks of the public API's side, once per
// subtask or per timer, never per record.
type Hooks[K comparable, In, Out, C any] struct {
	// Context returns the context fn sees, reading the current key and
	// time from core and emitting to the operator's outputs outs (as
	// task.NodeImpl.Build receives them: port 0 the main output, the
	// others side outputs); ordered says the operator runs a
	// deterministic function under task.Context.Ordered.
	Context func(core *keyed.Core[K], outs []any, ordered bool) C
	// Open creates fn's state handles on core before the first record.
	Open func(fn Function[C, In], core *keyed.Core[K]) error
	// OnTimer hands fn a timer that fired at t; processing says it is a
	// processing-time timer.
	OnTimer func(fn Function[C, In], ctx C, t int64, processing bool) error
}

// Node is a keyed process operator with one input.
type Node[K comparable, In, Out, C any] struct {
	// Key returns a record's key; Keys is the key type's codec and hash.
	Key  func(In) K
	Keys keyed.Keys[K]
	// New returns the function of one subtask.
	New   func() Function[C, In]
	Hooks Hooks[K, In, Out, C]
	// Det reports whether the function says it is deterministic.
	Det func() bool
}

// Deterministic reports whether the function says it is.
func (n *Node[K, In, Out, C]) Deterministic() bool { return n.Det() }

// Redistribution says that the operator's state is keyed: it moves by key
// group when the task restores at another parallelism.
func (*Node[K, In, Out, C]) Redistribution() task.Redistribution { return task.ByKeyGroup }

// HandsOver says that the node's state can pass in memory at a live
// rescale (task.HandOverNode).
func (*Node[K, In, Out, C]) HandsOver() {}

// Redistribution says that the operator's state is keyed: it moves by key
// group when the task restores at another parallelism.
func (*CoNode[K, In1, In2, Out, C]) Redistribution() task.Redistribution { return task.ByKeyGroup }

// HandsOver says that the node's state can pass in memory at a live
// rescale (task.HandOverNode).
func (*CoNode[K, In1, In2, Out, C]) HandsOver() {}

func (n *Node[K, In, Out, C]) Build(ctx *task.Context, outs []any) (task.Built, error) {
	op := newOp(ctx, outs, n.Keys, n.Key, n.New(), n.Hooks, ctx.Ordered && n.Deterministic())
	return task.Built{Op: op, Inputs: []any{op}}, nil
}

// CoNode is a keyed process operator with two inputs of the same key
// type: the first input's records go to the first function New returns,
// the second's to the second; both share the keyed state and timers.
type CoNode[K comparable, In1, In2, Out, C any] struct {
	Key1  func(In1) K
	Key2  func(In2) K
	Keys  keyed.Keys[K]
	New   func() (Function[C, In1], Second[C, In2])
	Hooks Hooks[K, In1, Out, C]
}

func (c *CoNode[K, In1, In2, Out, C]) Build(ctx *task.Context, outs []any) (task.Built, error) {
	fn1, fn2 := c.New()
	op := newOp(ctx, outs, c.Keys, c.Key1, fn1, c.Hooks, false)
	second := &second[K, In1, In2, Out, C]{op: op, key: c.Key2, fn: fn2}
	return task.Built{Op: op, Inputs: []any{op, second}}, nil
}

type op[K comparable, In, Out, C any] struct {
	task.Base
	core    *keyed.Core[K]
	key     func(In) K
	fn      Function[C, In]
	hooks   Hooks[K, In, Out, C]
	ctx     C
	ordered bool // a deterministic function under task.Context.Ordered
	due     ordered.Timers[K]
}

func newOp[K comparable, In, Out, C any](ctx *task.Context, outs []any, keys keyed.Keys[K], key func(In) K, fn Function[C, In],
	hooks Hooks[K, In, Out, C], ordered bool) *op[K, In, Out, C] {
	p := &op[K, In, Out, C]{key: key, fn: fn, hooks: hooks, ordered: ordered}
	p.core = keyed.NewCore[K](ctx, keys)
	p.ctx = hooks.Context(p.core, outs, ordered)
	return p
}

// Snapshot freezes the operator's keyed state and timers.
func (p *op[K, In, Out, C]) Snapshot(o task.SnapshotOptions) (func(dst []byte) (task.Encoded, error), error) {
	return p.core.Snapshot(o)
}

// Settle lets an LSM state backend write its cached changes through.
func (p *op[K, In, Out, C]) Settle() error { return p.core.Settle() }

// Close releases the state backend.
func (p *op[K, In, Out, C]) Close() error { return p.core.Close() }

// Restore loads the operator's keyed state and timers before Open.
func (p *op[K, In, Out, C]) Restore(data []byte) error { return p.core.Restore(data) }

// KeyedCore returns the operator's keyed core, for a hand-over.
func (p *op[K, In, Out, C]) KeyedCore() *keyed.Core[K] { return p.core }

// Adopt takes over the keyed state of retired operators before Open.
func (p *op[K, In, Out, C]) Adopt(a task.Adoption) error { return p.core.Adopt(a) }

func (p *op[K, In, Out, C]) Open(*task.Context) error {
	if err := p.core.Open(); err != nil {
		return err
	}
	return p.hooks.Open(p.fn, p.core)
}

func (p *op[K, In, Out, C]) Collect(ts int64, v In) {
	p.core.SetKey(p.key(v))
	p.core.TS = ts
	if err := p.fn.ProcessElement(p.ctx, v); err != nil {
		task.Fail(fmt.Errorf("%s: %w", p.core.Name, err))
	}
}

func (p *op[K, In, Out, C]) Watermark(wm int64) int64 {
	if p.ordered {
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

func (p *op[K, In, Out, C]) fireEvent(t int64, k K) {
	p.core.SetKey(k)
	p.core.TS = t
	if err := p.hooks.OnTimer(p.fn, p.ctx, t, false); err != nil {
		task.Fail(fmt.Errorf("%s: event timer: %w", p.core.Name, err))
	}
}

// watermarkOrdered fires the due event-time timers by time, then key hash
// and encoding (package ordered).
func (p *op[K, In, Out, C]) watermarkOrdered(wm int64) {
	p.due.Fire(p.core.Events, wm, p.core.Keys.Hash, ordered.ByEncoding(p.core.Keys.Codec), p.fireEvent)
	p.core.WM = wm
}

func (p *op[K, In, Out, C]) NextProcessingTime() (int64, bool) { return p.core.Procs.Next() }

func (p *op[K, In, Out, C]) FireProcessingTime(now int64) {
	for {
		t, k, ok := p.core.Procs.PopDue(now)
		if !ok {
			return
		}
		p.core.SetKey(k)
		p.core.TS = t
		if err := p.hooks.OnTimer(p.fn, p.ctx, t, true); err != nil {
			task.Fail(fmt.Errorf("%s: processing timer: %w", p.core.Name, err))
		}
	}
}

// second is the second input of a two-input keyed operator.
type second[K comparable, In1, In2, Out, C any] struct {
	op  *op[K, In1, Out, C]
	key func(In2) K
	fn  Second[C, In2]
}

func (s *second[K, In1, In2, Out, C]) Collect(ts int64, v In2) {
	s.op.core.SetKey(s.key(v))
	s.op.core.TS = ts
	if err := s.fn.ProcessElement2(s.op.ctx, v); err != nil {
		task.Fail(fmt.Errorf("%s: %w", s.op.core.Name, err))
	}
}
