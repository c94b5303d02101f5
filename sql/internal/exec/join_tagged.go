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
	keyed := weir.KeyBy(in, func(r row.Row) string {
		cols := rk
		if r.V[0].Bool() {
			cols = lk
		}
		var buf [64]byte
		return string(row.Key(buf[:0], r, cols))
	})
	return weir.Process(keyed, func() weir.KeyedProcessFunction[string, row.Row, row.Row] {
		return &taggedJoin{regularJoin{joiner: joiner{spec: spec}}}
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
type taggedJoin struct{ regularJoin }

func (j *taggedJoin) ProcessElement(ctx *weir.KeyedContext[string, row.Row], in row.Row) error {
	return j.process(ctx, row.Row{Op: in.Op, V: in.V[1:]}, in.V[0].Bool())
}
