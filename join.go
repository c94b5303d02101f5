package weir

import (
	"fmt"
	"maps"
	"time"

	"github.com/weir-stream/weir/internal/operator"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/operator/transform"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/state"
	"github.com/weir-stream/weir/internal/task"
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
// operator's watermark is the minimum of both inputs'.
func CoProcess[K comparable, In1, In2, Out any](a KeyedStream[K, In1], b KeyedStream[K, In2], newFn func() CoProcessFunction[K, In1, In2, Out], os ...OpOption) Stream[Out] {
	p := a.s.p
	node := &coNode[K, In1, In2, Out]{key1: a.key, key2: b.key, newFn: newFn}
	n := p.addNode(opts("co-process", os), plan.Operator, 1, node)
	node.keys = connectKeyed(a, n, 0)
	connectKeyed(b, n, 1)
	return newStream[Out](p, n, 0)
}

type coNode[K comparable, In1, In2, Out any] struct {
	keys  keyed.Keys[K]
	key1  func(In1) K
	key2  func(In2) K
	newFn func() CoProcessFunction[K, In1, In2, Out]
}

func (c *coNode[K, In1, In2, Out]) Build(ctx *task.Context, outs []any) (task.Built, error) {
	fn := c.newFn()
	op := &processOp[K, In1, Out]{key: c.key1, fn: coFirst[K, In1, In2, Out]{fn}}
	op.core = keyed.NewCore[K](ctx, c.keys)
	op.ctx = KeyedContext[K, Out]{core: op.core, out: operator.Out[Out](outs, 0)}
	second := &coSecond[K, In1, In2, Out]{op: op, key: c.key2, fn: fn}
	return task.Built{Op: op, Inputs: []any{op, second}}, nil
}

// coFirst presents a CoProcessFunction's first input and timers as a
// KeyedProcessFunction, so the two-input operator reuses processOp.
type coFirst[K comparable, In1, In2, Out any] struct {
	fn CoProcessFunction[K, In1, In2, Out]
}

func (f coFirst[K, In1, In2, Out]) ProcessElement(ctx *KeyedContext[K, Out], v In1) error {
	return f.fn.ProcessElement1(ctx, v)
}

func (f coFirst[K, In1, In2, Out]) OnTimer(ctx *KeyedContext[K, Out], t int64, d TimeDomain) error {
	h, ok := f.fn.(TimerHandler[K, Out])
	if !ok {
		return fmt.Errorf("a timer fired but the function has no OnTimer (implement weir.TimerHandler)")
	}
	return h.OnTimer(ctx, t, d)
}

func (f coFirst[K, In1, In2, Out]) Open(sc *StateContext[K]) error {
	if o, ok := f.fn.(StateOpener[K]); ok {
		return o.Open(sc)
	}
	return nil
}

// coSecond is the second input of a two-input keyed operator.
type coSecond[K comparable, In1, In2, Out any] struct {
	op  *processOp[K, In1, Out]
	key func(In2) K
	fn  CoProcessFunction[K, In1, In2, Out]
}

func (s *coSecond[K, In1, In2, Out]) Collect(ts int64, v In2) {
	s.op.core.SetKey(s.key(v))
	s.op.core.TS = ts
	if err := s.fn.ProcessElement2(&s.op.ctx, v); err != nil {
		task.Fail(fmt.Errorf("%s: %w", s.op.core.Name, err))
	}
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
	return CoProcess(a, b, func() CoProcessFunction[K, A, B, Out] {
		return &intervalJoin[K, A, B, Out]{lower: lo, upper: hi, join: join}
	}, append([]OpOption{Name("interval-join")}, os...)...)
}

type intervalJoin[K comparable, A, B, Out any] struct {
	lower, upper int64
	join         func(A, B) Out
	left         *state.Table[K, map[int64][]A]
	right        *state.Table[K, map[int64][]B]
	core         *keyed.Core[K]
}

func (j *intervalJoin[K, A, B, Out]) Open(sc *StateContext[K]) error {
	var err error
	j.core = sc.core
	if j.left, err = registerKeyed[map[int64][]A](sc, "interval-join-left", maps.Clone); err != nil {
		return err
	}
	j.right, err = registerKeyed[map[int64][]B](sc, "interval-join-right", maps.Clone)
	return err
}

// joinSide buffers v, a record of one side arriving at event time ts, and
// joins it with the other side's buffered records whose times lie in
// [ts+lo, ts+hi]; emit is called with each match and the pair's later
// time. It returns false for a late record, which is dropped.
func joinSide[K comparable, Own, Other, Out any](ctx *KeyedContext[K, Out], shard int, own *state.Table[K, map[int64][]Own],
	other *state.Table[K, map[int64][]Other], v Own, lo, hi int64, emit func(o Other, ts int64)) (bool, error) {
	ts := ctx.Timestamp()
	if ts == NoTimestamp {
		return false, fmt.Errorf("record without event time in an interval join; give the source WithTimestamps")
	}
	if ts < ctx.Watermark() {
		return false, nil // late
	}
	buf, ok := own.GetMutable(shard, ctx.Key())
	if !ok {
		buf = map[int64][]Own{}
		own.PutNew(shard, ctx.Key(), buf)
	}
	buf[ts] = append(buf[ts], v)
	others, _ := other.Get(shard, ctx.Key())
	for ots, os := range others {
		if ots >= ts+lo && ots <= ts+hi {
			for _, o := range os {
				emit(o, max(ts, ots))
			}
		}
	}
	return true, nil
}

func (j *intervalJoin[K, A, B, Out]) ProcessElement1(ctx *KeyedContext[K, Out], v A) error {
	ok, err := joinSide(ctx, j.core.Shard, j.left, j.right, v, j.lower, j.upper, func(b B, ts int64) {
		ctx.EmitAt(ts, j.join(v, b))
	})
	if ok {
		// Once the watermark passes ts+upper, no record of b that can
		// still arrive on time matches this one.
		ctx.RegisterEventTimer(ctx.Timestamp() + j.upper + 1)
	}
	return err
}

func (j *intervalJoin[K, A, B, Out]) ProcessElement2(ctx *KeyedContext[K, Out], v B) error {
	ok, err := joinSide(ctx, j.core.Shard, j.right, j.left, v, -j.upper, -j.lower, func(a A, ts int64) {
		ctx.EmitAt(ts, j.join(a, v))
	})
	if ok {
		ctx.RegisterEventTimer(ctx.Timestamp() - j.lower + 1)
	}
	return err
}

// OnTimer drops buffered records that can no longer match.
func (j *intervalJoin[K, A, B, Out]) OnTimer(ctx *KeyedContext[K, Out], t int64, _ TimeDomain) error {
	k, sh := ctx.Key(), j.core.Shard
	if buf, ok := j.left.GetMutable(sh, k); ok {
		for ts := range buf {
			if ts+j.upper < t {
				delete(buf, ts)
			}
		}
		if len(buf) == 0 {
			j.left.Delete(sh, k)
		}
	}
	if buf, ok := j.right.GetMutable(sh, k); ok {
		for ts := range buf {
			if ts-j.lower < t {
				delete(buf, ts)
			}
		}
		if len(buf) == 0 {
			j.right.Delete(sh, k)
		}
	}
	return nil
}
