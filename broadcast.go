package weir

import (
	"fmt"
	"reflect"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/operator/process"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// KeyedBroadcastProcessFunction processes a keyed stream together with a
// broadcast stream of rules or configuration (Flink's
// KeyedBroadcastProcessFunction).
//
// ProcessBroadcastElement is called, on every subtask, for every record
// of the broadcast stream; it may change the broadcast state and emit.
// ProcessElement is called for each record of the keyed stream, with
// ctx.Key() its key; it reads the broadcast state but must not change it
// (a change fails the job: the subtasks' copies would differ), and has
// keyed state and timers as a KeyedProcessFunction has. Records of the
// two inputs interleave in no fixed order: a keyed record may be handled
// before a broadcast record that came into the job earlier. A function
// whose output must not depend on that order keeps keyed records in
// keyed state and decides on an event-time timer, when the watermark
// (the lower of both inputs') says every earlier rule has arrived.
//
// The function may implement StateOpener for keyed state,
// BroadcastStateOpener for broadcast state and TimerHandler for timers.
type KeyedBroadcastProcessFunction[K comparable, In, B, Out any] interface {
	ProcessElement(ctx *KeyedContext[K, Out], in In) error
	ProcessBroadcastElement(ctx *BroadcastContext[Out], b B) error
}

// BroadcastStateOpener is implemented by broadcast functions that keep
// broadcast state. OpenBroadcast runs once per subtask before any
// record, after StateOpener's Open; it creates the state handles.
type BroadcastStateOpener interface {
	OpenBroadcast(bc *BroadcastStateContext) error
}

// BroadcastStateContext creates broadcast state handles. It is valid only
// during OpenBroadcast.
type BroadcastStateContext struct {
	store *process.BroadcastStore
	err   error
}

// BroadcastState is a map every subtask of a broadcast operator holds
// alike: ProcessBroadcastElement writes it on every subtask with the same
// records, and checkpoints store it. A subtask restored at another
// parallelism gets a copy of one old subtask's map. Changes to it
// outside ProcessBroadcastElement fail the job. Values read from it must
// not be changed in place.
type BroadcastState[UK comparable, UV any] struct {
	m     *process.BroadcastMap[UK, UV]
	store *process.BroadcastStore
	name  string
}

// NewBroadcastState creates the broadcast map state name, restoring it
// from a checkpoint when the operator restored one. Its key and value
// types need codecs (codec.For).
func NewBroadcastState[UK comparable, UV any](bc *BroadcastStateContext, name string) *BroadcastState[UK, UV] {
	s := &BroadcastState[UK, UV]{m: &process.BroadcastMap[UK, UV]{M: map[UK]UV{}}, store: bc.store, name: name}
	kc, err := codec.For[UK]()
	if err != nil {
		bc.fail(fmt.Errorf("broadcast state %q: keys of type %v cannot be checkpointed: %w", name, reflect.TypeFor[UK](), err))
		return s
	}
	vc, err := codec.For[UV]()
	if err != nil {
		bc.fail(fmt.Errorf("broadcast state %q: values of type %v cannot be checkpointed: %w", name, reflect.TypeFor[UV](), err))
		return s
	}
	s.m.Key, s.m.Value = kc, vc
	bc.fail(bc.store.Register(name, s.m))
	return s
}

func (bc *BroadcastStateContext) fail(err error) {
	if bc.err == nil {
		bc.err = err
	}
}

// Get returns the value of k and whether it is set.
func (s *BroadcastState[UK, UV]) Get(k UK) (UV, bool) {
	v, ok := s.m.M[k]
	return v, ok
}

// All calls f for every entry, in no fixed order, until f returns false.
func (s *BroadcastState[UK, UV]) All(f func(UK, UV) bool) {
	for k, v := range s.m.M {
		if !f(k, v) {
			return
		}
	}
}

// Len returns the number of entries.
func (s *BroadcastState[UK, UV]) Len() int { return len(s.m.M) }

// Put sets k to v. Only ProcessBroadcastElement may call it.
func (s *BroadcastState[UK, UV]) Put(k UK, v UV) {
	s.store.CheckWritable(s.name)
	s.m.M[k] = v
}

// Delete removes k. Only ProcessBroadcastElement may call it.
func (s *BroadcastState[UK, UV]) Delete(k UK) {
	s.store.CheckWritable(s.name)
	delete(s.m.M, k)
}

// Clear removes every entry. Only ProcessBroadcastElement may call it.
func (s *BroadcastState[UK, UV]) Clear() {
	s.store.CheckWritable(s.name)
	clear(s.m.M)
}

// BroadcastContext is what ProcessBroadcastElement sees. It is valid only
// during that call. It has no current key: keyed state and timers are
// for the keyed side.
type BroadcastContext[Out any] struct {
	ts  *int64
	wm  *int64
	now func() int64
	out task.Collector[Out]
}

// Timestamp returns the broadcast record's event time.
func (c *BroadcastContext[Out]) Timestamp() int64 { return *c.ts }

// Watermark returns the operator's current event-time watermark.
func (c *BroadcastContext[Out]) Watermark() int64 { return *c.wm }

// ProcessingTime returns the wall-clock time in epoch milliseconds.
func (c *BroadcastContext[Out]) ProcessingTime() int64 { return c.now() }

// Emit sends v downstream with the broadcast record's timestamp. Every
// subtask handles the record, so a record emitted unconditionally comes
// out once per subtask.
func (c *BroadcastContext[Out]) Emit(v Out) { c.out.Collect(*c.ts, v) }

// EmitAt sends v downstream with event time ts.
func (c *BroadcastContext[Out]) EmitAt(ts int64, v Out) { c.out.Collect(ts, v) }

// ProcessBroadcast connects the keyed stream ks with the stream rules,
// which every subtask of the operator receives whole (as Broadcast
// partitions it), and applies newFn's function to both (see
// KeyedBroadcastProcessFunction). newFn is called once per subtask. The
// operator's watermark is the lower of both inputs'.
//
// Its broadcast state is in every checkpoint and savepoint of every
// subtask; restored at another parallelism, each new subtask takes its
// keyed state by key group and the broadcast state of one old subtask.
// The copies are the same on every subtask as long as the broadcast
// records reach them in the same order: true for a broadcast stream from
// one subtask (give its source or last operator Parallelism(1)), not
// guaranteed across the records of several.
//
// F is the type newFn returns: the interface itself or a type
// implementing it, such as *MyFunction, so no type argument needs to be
// written.
func ProcessBroadcast[K comparable, In, B, Out any, F KeyedBroadcastProcessFunction[K, In, B, Out]](ks KeyedStream[K, In], rules Stream[B], newFn func() F, os ...OpOption) Stream[Out] {
	p := ks.s.p
	type ctx = *KeyedContext[K, Out]
	so := newSideOutputs()
	node := &process.BroadcastNode[K, In, B, Out, ctx]{Key: ks.key, Hooks: processHooks[K, In, Out](so),
		New: func(core *keyed.Core[K], out task.Collector[Out], store *process.BroadcastStore) (process.Function[ctx, In], func(B) error) {
			var fn KeyedBroadcastProcessFunction[K, In, B, Out] = newFn()
			bctx := &BroadcastContext[Out]{ts: &core.TS, wm: &core.WM, now: core.Now, out: out}
			return broadcastFirst[K, In, B, Out]{fn: fn, store: store}, func(b B) error { return fn.ProcessBroadcastElement(bctx, b) }
		}}
	n := p.addNode(opts("broadcast-process", os), plan.Operator, 1, node)
	p.attachSides(n, so)
	p.eventTimeRole(n, maySetTime, "")
	node.Keys = connectKeyed(ks, n, 0)
	if rules.p != p {
		p.setErr(fmt.Errorf("broadcast process %q: the broadcast stream is from another pipeline", n.Name))
	} else {
		connect(rules, n, 1, plan.Broadcast, nil)
	}
	return newStream[Out](p, n, 0)
}

// broadcastFirst presents a broadcast function's keyed side, its state
// and timers as a KeyedProcessFunction with the optional abilities, so
// the operator shares the hooks of Process.
type broadcastFirst[K comparable, In, B, Out any] struct {
	fn    KeyedBroadcastProcessFunction[K, In, B, Out]
	store *process.BroadcastStore
}

func (f broadcastFirst[K, In, B, Out]) ProcessElement(ctx *KeyedContext[K, Out], v In) error {
	return f.fn.ProcessElement(ctx, v)
}

func (f broadcastFirst[K, In, B, Out]) OnTimer(ctx *KeyedContext[K, Out], t int64, d TimeDomain) error {
	return fireTimer(f.fn, ctx, t, d)
}

func (f broadcastFirst[K, In, B, Out]) Open(sc *StateContext[K]) error {
	if o, ok := f.fn.(StateOpener[K]); ok {
		if err := o.Open(sc); err != nil {
			return err
		}
		if sc.err != nil {
			return sc.err
		}
	}
	if o, ok := f.fn.(BroadcastStateOpener); ok {
		bc := &BroadcastStateContext{store: f.store}
		if err := o.OpenBroadcast(bc); err != nil {
			return err
		}
		return bc.err
	}
	return nil
}
