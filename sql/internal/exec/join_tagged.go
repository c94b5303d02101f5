package exec

import (
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
)

// RegularJoinOfOne is RegularJoin over one stream that carries the rows
// of both sides, each tagged with its side: a leading BOOLEAN column,
// TRUE for a left row, followed by the side's columns. It keeps the same
// state as RegularJoin and makes the same rows; the planner uses it when
// both sides are read from one source, so that the source's rows need
// not go to two operators over two exchanges (each dropping the other
// side's rows) before the join.
func RegularJoinOfOne(in weir.Stream[row.Row], spec JoinSpec) weir.Stream[row.Row] {
	if err := spec.check(); err != nil {
		panic(err)
	}
	lk, rk := shift(spec.LeftKeys), shift(spec.RightKeys)
	if spec.IntKey {
		return regularJoinOfOneBy(in, spec, intKey(lk[0]), intKey(rk[0]))
	}
	return regularJoinOfOneBy(in, spec, stringKey(lk), stringKey(rk))
}

// regularJoinOfOneBy is RegularJoinOfOne keyed by lk (of a left row, its
// tag included) and rk.
func regularJoinOfOneBy[K comparable](in weir.Stream[row.Row], spec JoinSpec, lk, rk func(row.Row) K) weir.Stream[row.Row] {
	keyed := weir.KeyBy(in, func(r row.Row) K {
		if r.V[0].Bool() {
			return lk(r)
		}
		return rk(r)
	})
	return weir.Process(keyed, func() weir.KeyedProcessFunction[K, row.Row, row.Row] {
		return &taggedJoin[K]{regularJoin[K]{joiner: joiner{spec: spec}}}
	}, spec.opts("join-"+spec.Kind.String())...)
}

// shift returns cols, each one further right: past the side's tag.
func shift(cols []int) []int {
	out := make([]int, len(cols))
	for i, c := range cols {
		out[i] = c + 1
	}
	return out
}

// taggedJoin is a regular join of tagged rows (RegularJoinOfOne).
type taggedJoin[K comparable] struct{ regularJoin[K] }

func (j *taggedJoin[K]) ProcessElement(ctx *weir.KeyedContext[K, row.Row], in row.Row) error {
	return j.process(ctx, row.Row{Op: in.Op, V: in.V[1:]}, in.V[0].Bool())
}
