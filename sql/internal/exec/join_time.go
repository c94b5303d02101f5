package exec

import (
	"fmt"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
)

// IntervalJoin is Flink's interval join of l and r:
//
//	l.key = r.key AND r.time BETWEEN l.time + Lower AND l.time + Upper
//
// on rowtime. It reads spec.LeftKeys, RightKeys, LeftWidth, RightWidth,
// Cond, Lower, Upper and Name; spec.Kind must be InnerJoin. The rows'
// record timestamps are their rowtimes (LeftTime and RightTime name those
// columns for the planner; the operator reads the timestamps).
//
// Input: append-only on both sides. Output: append-only (+I), the left
// columns then the right columns, each row at the later of the two
// rowtimes. State: each side's rows until the watermark passes the last
// time a row of the other side could join them (weir.IntervalJoin);
// rows arriving behind the watermark are dropped, as in Flink.
//
// Errors: a spec of another kind than inner panics while the pipeline is
// built; an input row that is not an insert, or an error of Cond, fails
// the job.
func IntervalJoin(l, r weir.Stream[row.Row], spec JoinSpec) weir.Stream[row.Row] {
	if err := spec.check(); err != nil {
		panic(err)
	}
	if spec.Kind != InnerJoin {
		panic(fmt.Errorf("exec: an interval join is inner, not %v", spec.Kind))
	}
	j := &joiner{spec: spec}
	// Nulls never match: drop rows with NULL keys before the join.
	l = weir.Filter(l, insertsWithKeys("interval join", spec.LeftKeys))
	r = weir.Filter(r, insertsWithKeys("interval join", spec.RightKeys))
	pairs := weir.IntervalJoin(KeyBy(l, spec.LeftKeys), KeyBy(r, spec.RightKeys), spec.Lower, spec.Upper,
		func(a, b row.Row) row.Row { return j.concat(row.Insert, a.V, b.V) }, spec.opts("interval-join")...)
	if spec.Cond == nil {
		return pairs
	}
	return weir.Filter(pairs, func(p row.Row) bool {
		// A Filter cannot return an error; the engine turns a panic into
		// a failure of the job, which is what an error of Cond means.
		ok, err := spec.Cond(p.V)
		if err != nil {
			panic(fmt.Errorf("exec: interval join condition: %w", err))
		}
		return ok
	}, weir.Name(spec.name("interval-join")+"-cond"))
}

// insertsWithKeys returns a filter that keeps the rows whose keys are not
// NULL and fails the job (by panicking, see IntervalJoin) on a row that is
// not an insert.
func insertsWithKeys(op string, keys []int) func(row.Row) bool {
	return func(r row.Row) bool {
		if r.Op != row.Insert {
			panic(errNotInsert(op, r))
		}
		return !nullKey(r, keys)
	}
}

// WindowJoin is Flink's window join (WindowJoinOperator): both inputs
// are window table function results, with window_start and window_end in
// the columns spec.LeftWindow and spec.RightWindow; rows join when their
// keys (spec.LeftKeys = spec.RightKeys) and their windows are equal and
// spec.Cond holds. It reads Kind (inner, left, right or full), LeftKeys,
// RightKeys, LeftWidth, RightWidth, Cond, LeftWindow, RightWindow and
// Name.
//
// Input: append-only. A row arriving when the watermark has already
// reached its window's end - 1 is late and dropped, as in Flink.
//
// Output: append-only (+I), the left columns then the right columns, NULLs
// padding unmatched rows of an outer side; a window's rows are emitted
// when the watermark reaches window_end - 1, at that event time.
//
// State: each side's rows of every open window, by key and window; a
// window's rows are dropped once emitted, so the state is bounded by the
// rows of the windows the watermark has not passed.
//
// Errors: a bad spec panics while the pipeline is built; an input row that
// is not an insert, or an error of Cond, fails the job.
func WindowJoin(l, r weir.Stream[row.Row], spec JoinSpec) weir.Stream[row.Row] {
	if err := spec.check(); err != nil {
		panic(err)
	}
	lk := append(append([]int(nil), spec.LeftKeys...), spec.LeftWindow[:]...)
	rk := append(append([]int(nil), spec.RightKeys...), spec.RightWindow[:]...)
	return weir.CoProcess(KeyBy(l, lk), KeyBy(r, rk),
		func() weir.CoProcessFunction[string, row.Row, row.Row, row.Row] {
			return &windowJoin{joiner: joiner{spec: spec}}
		}, spec.opts("window-join-"+spec.Kind.String())...)
}

// windowJoin buffers each side's rows per key and window (the operator's
// key includes the window) until the window's end.
type windowJoin struct {
	joiner
	left, right *weir.ListState[row.Row, string]
}

func (j *windowJoin) Open(sc *weir.StateContext[string]) error {
	j.left = weir.NewListState[row.Row](sc, "left")
	j.right = weir.NewListState[row.Row](sc, "right")
	return nil
}

func (j *windowJoin) ProcessElement1(ctx *weir.KeyedContext[string, row.Row], in row.Row) error {
	return j.add(ctx, in, j.left, j.spec.LeftWindow[1])
}

func (j *windowJoin) ProcessElement2(ctx *weir.KeyedContext[string, row.Row], in row.Row) error {
	return j.add(ctx, in, j.right, j.spec.RightWindow[1])
}

func (j *windowJoin) add(ctx *weir.KeyedContext[string, row.Row], in row.Row, side *weir.ListState[row.Row, string], endCol int) error {
	if in.Op != row.Insert {
		return errNotInsert("window join", in)
	}
	fire := in.V[endCol].I - 1
	if fire <= ctx.Watermark() {
		return nil // late
	}
	side.Add(in)
	ctx.RegisterEventTimer(fire)
	return nil
}

// OnTimer joins the window's rows, emits them and drops them.
func (j *windowJoin) OnTimer(ctx *weir.KeyedContext[string, row.Row], ts int64, _ weir.TimeDomain) error {
	ls, rs := j.left.Get(), j.right.Get()
	// The key includes the join key, so all rows of both sides have equal
	// keys; NULL keys match nothing.
	nullKey := (len(ls) > 0 && nullKey(ls[0], j.spec.LeftKeys)) || (len(rs) > 0 && nullKey(rs[0], j.spec.RightKeys))
	rightMatched := make([]bool, len(rs))
	for _, lr := range ls {
		matched := false
		for i, rr := range rs {
			if nullKey {
				break
			}
			ok, err := j.match(lr.V, rr.V)
			if err != nil {
				return err
			}
			if ok {
				matched = true
				rightMatched[i] = true
				ctx.EmitAt(ts, j.concat(row.Insert, lr.V, rr.V))
			}
		}
		if !matched && j.spec.Kind.leftOuter() {
			ctx.EmitAt(ts, j.concat(row.Insert, lr.V, nil))
		}
	}
	if j.spec.Kind.rightOuter() {
		for i, rr := range rs {
			if !rightMatched[i] {
				ctx.EmitAt(ts, j.concat(row.Insert, nil, rr.V))
			}
		}
	}
	j.left.Clear()
	j.right.Clear()
	return nil
}
