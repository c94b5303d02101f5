package exec

import (
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
)

// Normalize turns an upsert stream keyed by keys (a primary key) into a
// full changelog, as Flink's ChangelogNormalize does after an upsert
// source: a key's first row is +I; a later row (+I or +U) for the key
// retracts the one before (-U of it, then +U), and nothing when it equals
// it; a -D (or -U) deletes the key's row (-D of the row kept, whose other
// columns the upsert source may not carry) and nothing if the key has
// none. It keeps the last row of every key, with a time-to-live if ttl
// is positive.
func Normalize(in weir.Stream[row.Row], keys []int, ttl time.Duration, name string) weir.Stream[row.Row] {
	return weir.Process(KeyBy(in, keys), func() weir.KeyedProcessFunction[string, row.Row, row.Row] {
		return &normalizeFn{ttl: ttl}
	}, weir.Name(name))
}

type normalizeFn struct {
	ttl  time.Duration
	last *weir.ValueState[row.Row, string]
}

func (n *normalizeFn) Open(sc *weir.StateContext[string]) error {
	var opts []weir.StateOption
	if n.ttl > 0 {
		opts = append(opts, weir.StateTTL(n.ttl))
	}
	n.last = weir.NewValueState[row.Row](sc, "last", opts...)
	return nil
}

func (n *normalizeFn) ProcessElement(ctx *weir.KeyedContext[string, row.Row], r row.Row) error {
	old, ok := n.last.Value()
	if r.Op.Retracts() {
		if ok {
			ctx.Emit(row.Row{Op: row.Delete, V: old.V})
			n.last.Clear()
		}
		return nil
	}
	switch {
	case !ok:
		ctx.Emit(row.Row{Op: row.Insert, V: r.V})
	case row.EqualValues(old, r):
		return nil
	default:
		ctx.Emit(row.Row{Op: row.UpdateBefore, V: old.V})
		ctx.Emit(row.Row{Op: row.UpdateAfter, V: r.V})
	}
	n.last.Update(row.Row{V: r.V})
	return nil
}
