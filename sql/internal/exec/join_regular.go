package exec

import (
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
)

// RegularJoin is Flink's streaming regular join (StreamingJoinOperator):
// an unwindowed equi-join of l and r on spec.LeftKeys = spec.RightKeys
// and spec.Cond, of spec.Kind. It reads spec.Kind, LeftKeys, RightKeys,
// LeftWidth, RightWidth, Cond, StateTTL and Name.
//
// Input: any changelog on either side. +I and +U rows add a row to their
// side, -U and -D rows retract an equal earlier row (a retraction of a
// row the state does not hold, as after its time-to-live, retracts
// nothing but is still joined with the other side's matches).
//
// Output: the left columns then the right columns, NULLs padding the
// side an outer join's unmatched row lacks. The changelog follows Flink:
//   - an inner join emits each new match with the input row's op (+I/+U;
//     -U/-D for a retracted input row), so an inner join of append-only
//     inputs is append-only;
//   - an outer join emits +I for new matches and -D for the matches a row
//     of an outer side retracts (a row of an inner side retracts its
//     matches with its own op, -U or -D);
//     an unmatched row of an outer side is emitted as +I padded, and that
//     padded row is retracted (-D) when its first match arrives and
//     emitted again (+I) when its last match is retracted.
//
// State: both sides' rows, keyed by the join key, each distinct row with
// its count and, on an outer side, its number of matches (Flink's
// JoinRecordStateView). Without a time-to-live the state grows with the
// number of distinct rows of each side for as long as the job runs.
// Rows with a NULL key are not stored: they match nothing, and on an outer
// side they pass through padded.
//
// Errors: a spec whose key lists differ in length, or of an unknown kind,
// panics while the pipeline is built; an error of Cond fails the job.
func RegularJoin(l, r weir.Stream[row.Row], spec JoinSpec) weir.Stream[row.Row] {
	if err := spec.check(); err != nil {
		panic(err)
	}
	return weir.CoProcess(KeyBy(l, spec.LeftKeys), KeyBy(r, spec.RightKeys),
		func() weir.CoProcessFunction[string, row.Row, row.Row, row.Row] {
			return &regularJoin{joiner: joiner{spec: spec}}
		}, spec.opts("join-"+spec.Kind.String())...)
}

// joinEntry is a distinct row in a side's state: its values (op +I), how
// many times it is held, and on an outer side how many rows of the other
// side it matches.
type joinEntry struct {
	Row   row.Row
	Count int64
	Assoc int64
}

type regularJoin struct {
	joiner
	left, right *weir.MapState[string, joinEntry, string]
}

func (j *regularJoin) Open(sc *weir.StateContext[string]) error {
	j.left = weir.NewMapState[string, joinEntry](sc, "left", j.spec.ttl()...)
	j.right = weir.NewMapState[string, joinEntry](sc, "right", j.spec.ttl()...)
	return nil
}

func (j *regularJoin) ProcessElement1(ctx *weir.KeyedContext[string, row.Row], in row.Row) error {
	return j.process(ctx, in, true)
}

func (j *regularJoin) ProcessElement2(ctx *weir.KeyedContext[string, row.Row], in row.Row) error {
	return j.process(ctx, in, false)
}

// output emits the join of in (of the input side) and other, in the
// left-then-right column order.
func (j *regularJoin) output(ctx *weir.KeyedContext[string, row.Row], op row.Op, in, other []row.Value, inIsLeft bool) {
	if inIsLeft {
		ctx.Emit(j.concat(op, in, other))
	} else {
		ctx.Emit(j.concat(op, other, in))
	}
}

// matches returns the other side's entries that join with in.
func (j *regularJoin) matches(in []row.Value, other *weir.MapState[string, joinEntry, string], inIsLeft bool) ([]string, []joinEntry, error) {
	var ids []string
	var es []joinEntry
	var err error
	other.All(func(id string, e joinEntry) bool {
		var ok bool
		if inIsLeft {
			ok, err = j.match(in, e.Row.V)
		} else {
			ok, err = j.match(e.Row.V, in)
		}
		if err != nil {
			return false
		}
		if ok {
			ids = append(ids, id)
			es = append(es, e)
		}
		return true
	})
	return ids, es, err
}

// process is Flink's StreamingJoinOperator.processElement.
func (j *regularJoin) process(ctx *weir.KeyedContext[string, row.Row], in row.Row, inIsLeft bool) error {
	self, other := j.left, j.right
	inOuter, otherOuter := j.spec.Kind.leftOuter(), j.spec.Kind.rightOuter()
	keys := j.spec.LeftKeys
	if !inIsLeft {
		self, other = other, self
		inOuter, otherOuter = otherOuter, inOuter
		keys = j.spec.RightKeys
	}
	accumulate := !in.Op.Retracts()
	if nullKey(in, keys) {
		if inOuter {
			op := row.Insert
			if !accumulate {
				op = row.Delete
			}
			j.output(ctx, op, in.V, nil, inIsLeft)
		}
		return nil
	}
	ids, matched, err := j.matches(in.V, other, inIsLeft)
	if err != nil {
		return err
	}
	n := int64(0)
	for _, e := range matched {
		n += e.Count
	}
	id := joinRowID(in.V)
	if !accumulate {
		j.retract(self, id)
		if n == 0 {
			if inOuter {
				j.output(ctx, row.Delete, in.V, nil, inIsLeft)
			}
			return nil
		}
		op := in.Op // Flink keeps -U of a row of an inner side
		if inOuter {
			op = row.Delete
		}
		for _, e := range matched {
			for range e.Count {
				j.output(ctx, op, in.V, e.Row.V, inIsLeft)
			}
		}
		if otherOuter {
			for i, e := range matched {
				if e.Assoc == 1 {
					for range e.Count {
						j.output(ctx, row.Insert, e.Row.V, nil, !inIsLeft)
					}
				}
				e.Assoc--
				other.Put(ids[i], e)
			}
		}
		return nil
	}
	if otherOuter {
		for i, e := range matched {
			if e.Assoc == 0 {
				for range e.Count {
					j.output(ctx, row.Delete, e.Row.V, nil, !inIsLeft)
				}
			}
			e.Assoc++
			other.Put(ids[i], e)
		}
	}
	if inOuter && n == 0 {
		j.output(ctx, row.Insert, in.V, nil, inIsLeft)
	}
	op := in.Op
	if inOuter || otherOuter {
		op = row.Insert
	}
	for _, e := range matched {
		for range e.Count {
			j.output(ctx, op, in.V, e.Row.V, inIsLeft)
		}
	}
	e, _ := self.Get(id)
	if e.Count == 0 {
		e.Row = row.Row{Op: row.Insert, V: in.V}
	}
	e.Count++
	e.Assoc = n
	self.Put(id, e)
	return nil
}

// retract removes one copy of the row id from a side's state.
func (j *regularJoin) retract(side *weir.MapState[string, joinEntry, string], id string) {
	e, ok := side.Get(id)
	if !ok {
		return
	}
	if e.Count <= 1 {
		side.Delete(id)
		return
	}
	e.Count--
	side.Put(id, e)
}
