package exec

import (
	"fmt"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
)

// GroupOptions tune GroupAggregate.
type GroupOptions struct {
	// Name names the operator (default "group-aggregate").
	Name string
	// StateTTL, when positive, drops a group's state StateTTL of
	// processing time after its last update (weir.StateTTL); a later row
	// of the group starts it anew, as Flink's table.exec.state.ttl does.
	StateTTL time.Duration
	// AppendOnly says the input holds only +I rows, so MIN and MAX keep
	// only their current value instead of every value's count. A
	// retraction reaching such an operator fails the job.
	AppendOnly bool
	// IntKeys says that the group keys are one or two columns of integer
	// types, keyed by their values (see DedupSpec.IntKeys).
	IntKeys bool
}

// CheckGroupAggs reports why GroupAggregate cannot run aggs over an
// input that is append-only or not: an unknown aggregate, an argument
// type it does not take, a missing argument, or an aggregate that
// cannot retract (FIRST_VALUE, LAST_VALUE, a user-defined aggregate
// without Retractor) over an updating input.
func CheckGroupAggs(aggs []AggSpec, appendOnly bool) error {
	_, err := compileAggs(aggs, !appendOnly)
	return err
}

// groupState is the state of one group: the rows it holds (+1 for each
// +I/+U, -1 for each -U/-D, whatever the filters) and each aggregate's
// accumulator, or, when the aggregates are simple (compactSlots), their
// slots.
type groupState struct {
	Rows  int64
	Accs  []accumulator
	Slots []int64
}

// GroupAggregate is the unbounded GROUP BY aggregation, with Flink's
// GroupAggFunction semantics.
//
// Input: any changelog (+I, -U, +U, -D); -U and -D rows retract a row
// earlier added. Output rows are the key columns, in the order of keys,
// then the aggregates' values in the order of aggs. Output is an
// updating changelog: a group's first result is +I; a later different
// result is -U of the old row then +U of the new one; an unchanged
// result emits nothing; when every row of a group has been retracted,
// the group's last row is deleted (-D) and its state cleared. A
// retraction for a group without state (never seen, or expired by
// StateTTL) is ignored. Output rows carry the timestamp of the input
// row that caused them.
//
// With no keys the aggregation is global: one group, on one subtask.
//
// State: per group, a groupState in a weir.ValueState — the row count
// and one accumulator per aggregate, which for DISTINCT holds every
// distinct value with its count, and for MIN and MAX over an updating
// input every value with its count. It is kept forever unless
// o.StateTTL is set.
//
// The planner checks the aggregates with CheckGroupAggs first:
// GroupAggregate panics on aggregates it refuses and on an invalid
// column index, both bugs of the planner.
func GroupAggregate(in weir.Stream[row.Row], keys []int, aggs []AggSpec, o GroupOptions) weir.Stream[row.Row] {
	fns, err := compileAggs(aggs, !o.AppendOnly)
	if err != nil {
		panic(err)
	}
	name := o.Name
	if name == "" {
		name = "group-aggregate"
	}
	keys = append([]int(nil), keys...)
	at, slots, compact := compactSlots(fns)
	if !compact {
		at = nil
	}
	g := groupFns{keys: keys, fns: fns, at: at, slots: slots, ttl: o.StateTTL, appendOnly: o.AppendOnly}
	if o.IntKeys {
		return groupAggregateBy(in, g, intsKeyOf(keys), name)
	}
	return groupAggregateBy(in, g, stringKey(keys), name)
}

// groupAggregateBy is GroupAggregate keyed by key.
func groupAggregateBy[K comparable](in weir.Stream[row.Row], g groupFns, key func(row.Row) K, name string) weir.Stream[row.Row] {
	return weir.Process(weir.KeyBy(in, key), func() weir.KeyedProcessFunction[K, row.Row, row.Row] {
		return &groupAgg[K]{groupFns: g}
	}, weir.Name(name))
}

// groupFns is what a group aggregation computes, whatever its key type.
type groupFns struct {
	keys []int
	fns  []aggFunc
	// at is each aggregate's first slot when they are simple, nil
	// otherwise; slots the number of slots.
	at    []int
	slots int
	ttl   time.Duration
	// appendOnly refuses retractions (MIN and MAX keep no value counts).
	appendOnly bool
}

type groupAgg[K comparable] struct {
	groupFns
	state *weir.ValueState[groupState, K]
}

func (g *groupAgg[K]) Open(sc *weir.StateContext[K]) error {
	var opts []weir.StateOption
	if g.ttl > 0 {
		opts = append(opts, weir.StateTTL(g.ttl))
	}
	g.state = weir.NewValueState[groupState](sc, "group", opts...)
	return nil
}

func (g *groupAgg[K]) ProcessElement(ctx *weir.KeyedContext[K, row.Row], r row.Row) error {
	st, seen := g.state.Value()
	sign := int64(1)
	if r.Op.Retracts() {
		if !seen {
			return nil
		}
		sign = -1
		if g.appendOnly {
			return fmt.Errorf("exec: group aggregate %v: a %s row reached an append-only aggregation", ctx.Key(), r.Op)
		}
	}
	if seen && g.at != nil && st.Slots == nil {
		// Restored from a snapshot that kept accumulators (groupState
		// gained Slots later).
		st.Slots, st.Accs = slotsOf(g.fns, g.at, g.slots, st.Accs), nil
	}
	// The old and the new row of a group come out of one allocation:
	// both are usually emitted, -U and +U.
	var prev row.Row
	w := len(g.keys) + len(g.fns)
	n := w
	if seen {
		n = 2 * w
	}
	vals := make([]row.Value, 0, n)
	if seen {
		prev = g.result(vals[:0:w], r, &st)
		vals = vals[w:w]
	} else if g.at != nil {
		st.Slots = make([]int64, g.slots)
	} else {
		st.Accs = make([]accumulator, len(g.fns))
	}
	if g.at != nil {
		// Simple aggregates have an append-only input: sign is 1.
		for i := range g.fns {
			g.fns[i].addCompact(st.Slots, g.at[i], r)
		}
	} else {
		for i := range g.fns {
			g.fns[i].add(&st.Accs[i], r, sign)
		}
	}
	st.Rows += sign
	if st.Rows <= 0 {
		prev.Op = row.Delete
		ctx.Emit(prev)
		g.state.Clear()
		return nil
	}
	g.state.Update(st)
	next := g.result(vals, r, &st)
	switch {
	case !seen:
		ctx.Emit(next)
	case !row.EqualValues(prev, next):
		prev.Op = row.UpdateBefore
		ctx.Emit(prev)
		next.Op = row.UpdateAfter
		ctx.Emit(next)
	}
	return nil
}

// result returns the group's row: r's key columns, then the aggregates,
// appended to vs (empty; with room for them, it allocates nothing).
func (g *groupFns) result(vs []row.Value, r row.Row, st *groupState) row.Row {
	for _, k := range g.keys {
		vs = append(vs, r.V[k])
	}
	for i := range g.fns {
		if g.at != nil {
			vs = append(vs, g.fns[i].resultCompact(st.Slots, g.at[i]))
		} else {
			vs = append(vs, g.fns[i].result(&st.Accs[i]))
		}
	}
	return row.Row{V: vs}
}
