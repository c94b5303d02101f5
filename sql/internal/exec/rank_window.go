package exec

import (
	"slices"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
)

// WindowRank is Flink's window TopN (WindowRankOperator): the rows
// numbered spec.Start to spec.End by spec.Order within each window
// (columns spec.WindowStart and spec.WindowEnd of a window table function
// result) and partition (spec.PartitionKeys). It reads PartitionKeys,
// Order, Start, End, WithRowNumber, WindowStart, WindowEnd and Name.
//
// Input: append-only; a row arriving when the watermark has reached its
// window's end - 1 is late and dropped.
//
// Output: append-only (+I): a window's ranked rows, in rank order, with
// the row number appended if WithRowNumber, emitted once when the
// watermark reaches window_end - 1, at that event time.
//
// State: per window and partition its top End rows, dropped when emitted.
//
// Errors: an empty range panics while the pipeline is built; an input row
// that is not an insert fails the job.
func WindowRank(in weir.Stream[row.Row], spec RankSpec) weir.Stream[row.Row] {
	if err := spec.check(); err != nil {
		panic(err)
	}
	keys := append(append([]int(nil), spec.PartitionKeys...), spec.WindowStart, spec.WindowEnd)
	return weir.Process(KeyBy(in, keys), func() weir.KeyedProcessFunction[string, row.Row, row.Row] {
		return &windowRankFn{spec: spec}
	}, spec.opts("window-rank")...)
}

type windowRankFn struct {
	spec RankSpec
	rows *weir.ValueState[[]row.Row, string]
}

func (f *windowRankFn) Open(sc *weir.StateContext[string]) error {
	f.rows = weir.NewValueState[[]row.Row](sc, "rows")
	return nil
}

func (f *windowRankFn) ProcessElement(ctx *weir.KeyedContext[string, row.Row], in row.Row) error {
	if in.Op != row.Insert {
		return errNotInsert("window rank", in)
	}
	fire := in.V[f.spec.WindowEnd].I - 1
	if fire <= ctx.Watermark() {
		return nil // late
	}
	rows, _ := f.rows.Value()
	i := rankInsertAt(f.spec.Order, rows, in)
	if int64(i) >= f.spec.End {
		return nil
	}
	rows = slices.Insert(slices.Clone(rows), i, in)
	if int64(len(rows)) > f.spec.End {
		rows = rows[:f.spec.End]
	}
	f.rows.Update(rows)
	ctx.RegisterEventTimer(fire)
	return nil
}

func (f *windowRankFn) OnTimer(ctx *weir.KeyedContext[string, row.Row], ts int64, _ weir.TimeDomain) error {
	rows, _ := f.rows.Value()
	start := f.spec.start()
	for i, r := range rankWindow(rows, start, f.spec.End) {
		ctx.EmitAt(ts, rankedRow(f.spec, row.Insert, r, start+int64(i)))
	}
	f.rows.Clear()
	return nil
}
