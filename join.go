package weir

import (
	"fmt"
	"time"

	joinop "github.com/weir-stream/weir/internal/operator/join"
	"github.com/weir-stream/weir/internal/operator/process"
	"github.com/weir-stream/weir/internal/operator/transform"
	"github.com/weir-stream/weir/internal/plan"
)

// CoProcessFunction processes two keyed streams with the same key type and
// shared keyed state and timers: ProcessElement1 handles the first input,
// ProcessElement2 the second. It may implement StateOpener and, if it
// registers timers, TimerHandler.
type CoProcessFunction[K comparable, In1, In2, Out any] interface {
	ProcessElement1(ctx *KeyedContext[K, Out], v In1) error
	ProcessElement2(ctx *KeyedContext[K, Out], v In2) error
}

// CoProcess connects two keyed streams: records of both with the same key
// reach the same function instance, which sees the key's state. The
// operator's watermark is the minimum of both inputs'. F is the type
// newFn returns: the interface itself or a type implementing it, such as
// func() *MyFunction.
func CoProcess[K comparable, In1, In2, Out any, F CoProcessFunction[K, In1, In2, Out]](a KeyedStream[K, In1], b KeyedStream[K, In2], newFn func() F, os ...OpOption) Stream[Out] {
	p := a.s.p
	type ctx = *KeyedContext[K, Out]
	so := newSideOutputs()
	node := &process.CoNode[K, In1, In2, Out, ctx]{Key1: a.key, Key2: b.key, Hooks: processHooks[K, In1, Out](so),
		New: func() (process.Function[ctx, In1], process.Second[ctx, In2]) {
			var fn CoProcessFunction[K, In1, In2, Out] = newFn()
			return coFirst[K, In1, In2, Out]{fn}, fn
		}}
	n := p.addNode(opts("co-process", os), plan.Operator, 1, node)
	p.attachSides(n, so)
	p.eventTimeRole(n, maySetTime, "")
	node.Keys = connectKeyed(a, n, 0)
	connectKeyed(b, n, 1)
	return newStream[Out](p, n, 0)
}

// coFirst presents a CoProcessFunction's first input, state and timers
// as a KeyedProcessFunction with the optional abilities, so the two-input
// operator shares the hooks of Process.
type coFirst[K comparable, In1, In2, Out any] struct {
	fn CoProcessFunction[K, In1, In2, Out]
}

func (f coFirst[K, In1, In2, Out]) ProcessElement(ctx *KeyedContext[K, Out], v In1) error {
	return f.fn.ProcessElement1(ctx, v)
}

func (f coFirst[K, In1, In2, Out]) OnTimer(ctx *KeyedContext[K, Out], t int64, d TimeDomain) error {
	return fireTimer(f.fn, ctx, t, d)
}

func (f coFirst[K, In1, In2, Out]) Open(sc *StateContext[K]) error {
	if o, ok := f.fn.(StateOpener[K]); ok {
		return o.Open(sc)
	}
	return nil
}

// CoFlatMap connects two streams of different types without keys: f1
// handles records of a, f2 records of b, both emitting into one output.
func CoFlatMap[In1, In2, Out any](a Stream[In1], b Stream[In2], f1 func(In1, func(Out)), f2 func(In2, func(Out)), os ...OpOption) Stream[Out] {
	p := a.p
	n := p.addNode(opts("co-flatmap", os), plan.Operator, 1, transform.CoFlatMap(f1, f2))
	connect(a, n, 0, plan.Forward, nil)
	connect(b, n, 1, plan.Forward, nil)
	return newStream[Out](p, n, 0)
}

// Either holds a record of one of two streams, as the input of a window
// join's window function.
type Either[A, B any] struct {
	Right bool // false: the record is Left, from the first stream
	Left  A
	R     B
}

// WindowJoin joins two keyed streams per window: for every key and window
// it calls join for each pair of a record of a and a record of b that fall
// into that window. The results carry the window's max timestamp.
func WindowJoin[K comparable, A, B, Out any](a KeyedStream[K, A], b KeyedStream[K, B], assigner WindowAssigner, join func(A, B) Out, os ...OpOption) Stream[Out] {
	c := opts("window-join", os)
	left := Map(a.s, func(v A) Either[A, B] { return Either[A, B]{Left: v} }, Name(c.name+"-left"))
	right := Map(b.s, func(v B) Either[A, B] { return Either[A, B]{Right: true, R: v} }, Name(c.name+"-right"))
	ka, kb := a.key, b.key
	keyed := KeyBy(Union(left, right), func(e Either[A, B]) K {
		if e.Right {
			return kb(e.R)
		}
		return ka(e.Left)
	})
	keyed.keyCodec = a.keyCodec
	return ProcessWindow(WindowBy(keyed, assigner), func(_ K, _ Window, recs []Either[A, B], emit func(Out)) error {
		for _, l := range recs {
			if l.Right {
				continue
			}
			for _, r := range recs {
				if r.Right {
					emit(join(l.Left, r.R))
				}
			}
		}
		return nil
	}, Name(c.name), Parallelism(c.parallelism))
}

// IntervalJoin joins two keyed streams by time: a record of a with event
// time t pairs with every record of b with the same key and event time in
// [t+lower, t+upper]. Each result carries the later of the two event
// times. Records arriving behind the watermark are dropped, as in Flink.
func IntervalJoin[K comparable, A, B, Out any](a KeyedStream[K, A], b KeyedStream[K, B], lower, upper time.Duration, join func(A, B) Out, os ...OpOption) Stream[Out] {
	lo, hi := lower.Milliseconds(), upper.Milliseconds()
	if lo > hi {
		a.s.p.setErr(fmt.Errorf("interval join: lower bound %v is above upper bound %v", lower, upper))
	}
	out := CoProcess(a, b, func() CoProcessFunction[K, A, B, Out] {
		return &intervalJoin[K, A, B, Out]{j: joinop.Interval[K, A, B]{Lower: lo, Upper: hi}, join: join}
	}, append([]OpOption{Name("interval-join")}, os...)...)
	a.s.p.eventTimeRole(out.outs[0].n, needsTime, "interval join")
	return out
}

// intervalJoin runs join.Interval as a CoProcessFunction.
type intervalJoin[K comparable, A, B, Out any] struct {
	j    joinop.Interval[K, A, B]
	join func(A, B) Out
}

func (j *intervalJoin[K, A, B, Out]) Open(sc *StateContext[K]) error { return j.j.Open(sc.core) }

func (j *intervalJoin[K, A, B, Out]) ProcessElement1(ctx *KeyedContext[K, Out], v A) error {
	return j.j.Left(v, func(b B, ts int64) { ctx.EmitAt(ts, j.join(v, b)) })
}

func (j *intervalJoin[K, A, B, Out]) ProcessElement2(ctx *KeyedContext[K, Out], v B) error {
	return j.j.Right(v, func(a A, ts int64) { ctx.EmitAt(ts, j.join(a, v)) })
}

// OnTimer drops buffered records that can no longer match.
func (j *intervalJoin[K, A, B, Out]) OnTimer(_ *KeyedContext[K, Out], t int64, _ TimeDomain) error {
	j.j.OnTimer(t)
	return nil
}
