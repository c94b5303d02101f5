package exec

import (
	"fmt"
	"slices"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
)

// RankKey is one key of an ORDER BY: a column, its direction and where
// its NULLs go. Flink's defaults are ASC NULLS FIRST and DESC NULLS LAST;
// the planner sets NullsLast explicitly.
type RankKey struct {
	Col       int
	Desc      bool
	NullsLast bool
}

// rankCompare orders two rows by keys, as ORDER BY does.
func rankCompare(keys []RankKey, x, y row.Row) int {
	for _, k := range keys {
		a, b := x.V[k.Col], y.V[k.Col]
		an, bn := a.IsNull(), b.IsNull()
		if an || bn {
			if an && bn {
				continue
			}
			c := 1
			if an {
				c = -1
			}
			if k.NullsLast {
				c = -c
			}
			return c
		}
		c := row.Compare(a, b)
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// RankSpec describes a ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...)
// filtered to a range of row numbers: Flink's TopN.
type RankSpec struct {
	// PartitionKeys are the PARTITION BY columns (none: one partition).
	PartitionKeys []int
	// IntKeys says that PartitionKeys are one or two columns of integer
	// types, keyed by their values (see DedupSpec.IntKeys). Rank only;
	// WindowRank keys by the encoding.
	IntKeys bool
	// Order is the ORDER BY; rows equal by it rank by arrival, the
	// earlier first.
	Order []RankKey
	// Start and End are the row numbers kept, Start <= rownum <= End
	// (rownum <= N is Start 1, End N; a filter rownum > M makes Start
	// M+1). Start 0 means 1.
	Start, End int64
	// WithRowNumber appends the row number (BIGINT) as the last column.
	WithRowNumber bool
	// Updating says the input has retractions (-U, -D); without it the
	// input must be append-only, and the operator keeps only the top End
	// rows of each partition.
	Updating bool
	// WindowStart and WindowEnd are the window_start and window_end
	// columns of WindowRank's input.
	WindowStart, WindowEnd int
	// StateTTL, if positive, is the time-to-live of Rank's state
	// (processing time since a partition was last written).
	StateTTL time.Duration
	// Name names the operator and its state (see JoinSpec.Name).
	Name string
}

func (s RankSpec) check() error {
	if s.End < 1 || s.start() > s.End {
		return fmt.Errorf("exec: rank range [%d, %d] is empty", s.start(), s.End)
	}
	return nil
}

func (s RankSpec) start() int64 { return max(s.Start, 1) }

func (s RankSpec) opts(def string) []weir.OpOption {
	if s.Name != "" {
		def = s.Name
	}
	return []weir.OpOption{weir.Name(def)}
}

// Rank is Flink's streaming TopN: per partition, the rows numbered Start
// to End by Order. It reads every field of spec but WindowStart and
// WindowEnd.
//
// Input: append-only (Flink's AppendOnlyTopNFunction), or with
// spec.Updating any changelog (RetractableTopNFunction): +I and +U add a
// row, -U and -D retract an equal row (one the state does not hold is
// ignored).
//
// Output: the input's columns, and with WithRowNumber the row number, as
// a changelog of the partition's top rows. With the row number, a change
// of the row at a rank emits -U of the old row and +U of the new one at
// that rank (+I for a rank newly filled, -D for a rank emptied); without
// it, a row leaving the top is deleted (-D) and a row entering it inserted
// (+I). The final table is Flink's; the updates between may differ in
// order.
//
// State: per partition, its top End rows, or with Updating all its rows
// (Flink keeps them too: a retraction may promote any of them), each
// distinct row once with its count, and a sorted buffer of the first
// 2*End of them; a retraction that leaves fewer than End in the buffer
// refills it with a scan of the partition's rows. Without a time-to-live
// an updating input's state grows with its rows, and any input's with its
// partitions; with one, rows expire one by one and ranks are computed
// from what is left.
//
// Errors: an empty range panics while the pipeline is built; a retraction
// on an input not declared Updating fails the job.
func Rank(in weir.Stream[row.Row], spec RankSpec) weir.Stream[row.Row] {
	if err := spec.check(); err != nil {
		panic(err)
	}
	if spec.IntKeys {
		return rankBy(in, spec, intsKeyOf(spec.PartitionKeys))
	}
	return rankBy(in, spec, stringKey(spec.PartitionKeys))
}

// rankBy is Rank keyed by key.
func rankBy[K comparable](in weir.Stream[row.Row], spec RankSpec, key func(row.Row) K) weir.Stream[row.Row] {
	return weir.Process(weir.KeyBy(in, key), func() weir.KeyedProcessFunction[K, row.Row, row.Row] {
		return &rankFn[K]{spec: spec}
	}, spec.opts("rank")...)
}

type rankFn[K comparable] struct {
	spec RankSpec
	top  *weir.ValueState[rankTop, K]
	all  *weir.MapState[string, rankCount, K] // with Updating
}

// rankTop is a partition's best rows in order: over an append-only input
// its top End rows; over an updating one the first of all its rows, up to
// rankBuffer(End) of them, with the count of all rows and the arrival
// number the next distinct row gets.
//
// A top of an append-only input with row numbers keeps each row with its
// row number appended, as it was last emitted (Numbered; see
// rank_numbered.go).
type rankTop struct {
	Rows        []row.Row
	Total, Next int64
	Numbered    bool
}

// ImmutableInState declares that a stored rankTop's rows are never
// changed in place (weir.Immutable): a change builds a new slice. So a
// snapshot encodes the tops it shares later, on another goroutine, and a
// read of a partition whose top does not change marks nothing to write
// into the next incremental checkpoint.
func (rankTop) ImmutableInState() {}

func (f *rankFn[K]) Open(sc *weir.StateContext[K]) error {
	var opts []weir.StateOption
	if f.spec.StateTTL > 0 {
		opts = append(opts, weir.StateTTL(f.spec.StateTTL))
	}
	f.top = weir.NewValueState[rankTop](sc, "top", opts...)
	if f.spec.Updating {
		f.all = weir.NewMapState[string, rankCount](sc, "all", opts...)
	}
	return nil
}

// rankInsertAt returns where r goes in the sorted rows: after the rows equal
// to it by the order.
func rankInsertAt(keys []RankKey, rows []row.Row, r row.Row) int {
	i, _ := slices.BinarySearchFunc(rows, r, func(e, t row.Row) int {
		if rankCompare(keys, e, t) <= 0 {
			return -1
		}
		return 1
	})
	return i
}

func (f *rankFn[K]) ProcessElement(ctx *weir.KeyedContext[K, row.Row], in row.Row) error {
	st, _ := f.top.Value()
	if !f.spec.Updating && f.spec.WithRowNumber {
		if in.Op.Retracts() {
			return errNotInsert("rank (not declared updating)", in)
		}
		st, changed := f.insertNumbered(ctx, numberTop(st), in)
		if changed {
			f.top.Update(st)
		}
		return nil
	}
	st = plainTop(st)
	start, end := f.spec.start(), f.spec.End
	before := rankWindow(st.Rows, start, end)
	if f.spec.Updating {
		st = f.update(st, in)
	} else {
		if in.Op.Retracts() {
			return errNotInsert("rank (not declared updating)", in)
		}
		i := rankInsertAt(f.spec.Order, st.Rows, in)
		if int64(i) >= end {
			return nil // not in the top and never will be
		}
		// A new slice (the state's is shared with snapshots), made once.
		n := min(int64(len(st.Rows))+1, end)
		rows := make([]row.Row, 0, n)
		rows = append(append(rows, st.Rows[:i]...), row.Row{Op: row.Insert, V: in.V})
		st.Rows = append(rows, st.Rows[i:n-1]...)
	}
	emitRankDiff(ctx, f.spec, before, rankWindow(st.Rows, start, end))
	if len(st.Rows) == 0 && st.Total <= 0 {
		f.top.Clear()
		return nil
	}
	f.top.Update(st)
	return nil
}

// rankWindow returns the rows numbered start to end (1-based, inclusive).
func rankWindow(rows []row.Row, start, end int64) []row.Row {
	lo, hi := min(start-1, int64(len(rows))), min(end, int64(len(rows)))
	return rows[lo:hi]
}

// ranked returns r with op and, if the spec asks, its row number.
func rankedRow(spec RankSpec, op row.Op, r row.Row, n int64) row.Row {
	v := r.V
	if spec.WithRowNumber {
		v = append(v[:len(v):len(v)], row.BigInt(n))
	}
	return row.Row{Op: op, V: v}
}

// sameRank reports whether rows a and b at one rank have equal values:
// at once when they are the same row (ranks above an insertion keep
// theirs).
func sameRank(a, b row.Row) bool {
	if len(a.V) == len(b.V) && (len(a.V) == 0 || &a.V[0] == &b.V[0]) {
		return true
	}
	return row.EqualValues(a, b)
}

// numberedRows makes the rows with row numbers one emitRankDiff emits
// out of one allocation: a change of rank shifts the rows below it, so an
// insertion emits up to twice as many rows as the top holds.
type numberedRows []row.Value

// row returns r with op and row number n (see rankedRow).
func (s *numberedRows) row(op row.Op, r row.Row, n int64) row.Row {
	i := len(*s)
	*s = append(append(*s, r.V...), row.BigInt(n))
	return row.Row{Op: op, V: (*s)[i:len(*s):len(*s)]}
}

// emitRankDiff emits the changelog that takes the top rows before to
// after (see Rank).
func emitRankDiff[K comparable](ctx *weir.KeyedContext[K, row.Row], spec RankSpec, before, after []row.Row) {
	start := spec.start()
	if spec.WithRowNumber {
		// The ranks above the first change keep their rows; below it,
		// rows almost always differ, so room for all of them is reserved.
		first := 0
		for first < min(len(before), len(after)) && sameRank(before[first], after[first]) {
			first++
		}
		values := 0
		for _, rs := range [][]row.Row{before[first:], after[first:]} {
			for _, r := range rs {
				values += len(r.V) + 1
			}
		}
		if values == 0 {
			return
		}
		rows := make(numberedRows, 0, values)
		for i := first; i < max(len(before), len(after)); i++ {
			n := start + int64(i)
			switch {
			case i >= len(before):
				ctx.Emit(rows.row(row.Insert, after[i], n))
			case i >= len(after):
				ctx.Emit(rows.row(row.Delete, before[i], n))
			case !sameRank(before[i], after[i]):
				ctx.Emit(rows.row(row.UpdateBefore, before[i], n))
				ctx.Emit(rows.row(row.UpdateAfter, after[i], n))
			}
		}
		return
	}
	count := map[string]int{}
	for _, r := range after {
		count[joinRowID(r.V)]++
	}
	for _, r := range before {
		id := joinRowID(r.V)
		if count[id] > 0 {
			count[id]--
			continue
		}
		ctx.Emit(rankedRow(spec, row.Delete, r, 0))
	}
	for _, r := range after {
		id := joinRowID(r.V)
		if count[id] > 0 {
			count[id]--
			ctx.Emit(rankedRow(spec, row.Insert, r, 0))
		}
	}
}
