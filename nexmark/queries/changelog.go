package queries

import (
	"github.com/weir-stream/weir"
)

// Changelog operations, as Flink's RowKind.
const (
	Insert       = "+I"
	UpdateBefore = "-U"
	UpdateAfter  = "+U"
	Delete       = "-D"
)

// Changelog turns a keyed stream of new values into changelog rows, as a
// Flink upsert query's output: the first value of a key becomes
// row(Insert, v); a later different value v2 after v becomes
// row(UpdateBefore, v) then row(UpdateAfter, v2); an equal value emits
// nothing. The final table a changelog means is obtained by applying the
// rows in order per key (see ApplyChangelog in the tests).
func Changelog[K comparable, V comparable, R any](ks weir.KeyedStream[K, V], row func(op string, v V) R, os ...weir.OpOption) weir.Stream[R] {
	return weir.Process(ks, func() weir.KeyedProcessFunction[K, V, R] {
		return &changelog[K, V, R]{row: row}
	}, os...)
}

type changelog[K comparable, V comparable, R any] struct {
	row  func(string, V) R
	last *weir.ValueState[V, K]
}

func (c *changelog[K, V, R]) Open(sc *weir.StateContext[K]) error {
	c.last = weir.NewValueState[V](sc, "last")
	return nil
}

func (c *changelog[K, V, R]) ProcessElement(ctx *weir.KeyedContext[K, R], v V) error {
	old, ok := c.last.Value()
	switch {
	case !ok:
		ctx.Emit(c.row(Insert, v))
	case old == v:
		return nil
	default:
		ctx.Emit(c.row(UpdateBefore, old))
		ctx.Emit(c.row(UpdateAfter, v))
	}
	c.last.Update(v)
	return nil
}
