package exec

import (
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
)

// DedupSpec describes a deduplication as Flink plans it: ROW_NUMBER()
// OVER (PARTITION BY Keys ORDER BY a time attribute ASC|DESC) with
// rownum = 1.
type DedupSpec struct {
	// Keys are the PARTITION BY columns.
	Keys []int
	// IntKeys says that Keys are one or two columns of integer types
	// (INT, BIGINT): rows are then keyed by the columns' values instead of
	// their encoding (the key type of the state differs: a savepoint
	// taken with one does not restore into the other).
	IntKeys bool
	// TimeCol is the rowtime column ordered by, or -1 for a processing
	// time attribute: arrival order.
	TimeCol int
	// KeepLast keeps the last row (ORDER BY ... DESC); otherwise the
	// first (ASC).
	KeepLast bool
	// WithRowNumber appends the row number, always 1, as a BIGINT column.
	WithRowNumber bool
	// StateTTL, if positive, is the time-to-live of a key's kept row.
	StateTTL time.Duration
	// Name names the operator and its state (see JoinSpec.Name).
	Name string
}

// Deduplicate keeps one row per key, as Flink's deduplicate functions
// (ProcTimeDeduplicateKeepFirstRowFunction, ...KeepLastRowFunction,
// RowTimeDeduplicateFunction).
//
// Input: append-only.
//
// Output: the input's columns (and the row number 1 with WithRowNumber).
// Keeping the first row in processing time is append-only: the first row
// of each key, +I, and nothing else. Otherwise the output is a changelog:
// +I for a key's first row, then -U of the kept row and +U of a row that
// replaces it. A row replaces the kept one when, keeping the last row, it
// arrives later (processing time) or has an equal or later rowtime; and,
// keeping the first row in rowtime, when it has an earlier rowtime.
//
// State: the kept row (for keep-first in processing time, a flag) per key,
// growing with the keys unless StateTTL bounds it.
//
// Errors: an input row that is not an insert fails the job.
func Deduplicate(in weir.Stream[row.Row], spec DedupSpec) weir.Stream[row.Row] {
	if spec.IntKeys {
		return deduplicateBy(in, spec, intsKeyOf(spec.Keys))
	}
	return deduplicateBy(in, spec, stringKey(spec.Keys))
}

// deduplicateBy is Deduplicate keyed by key.
func deduplicateBy[K comparable](in weir.Stream[row.Row], spec DedupSpec, key func(row.Row) K) weir.Stream[row.Row] {
	name := spec.Name
	if name == "" {
		name = "deduplicate"
	}
	return weir.Process(weir.KeyBy(in, key), func() weir.KeyedProcessFunction[K, row.Row, row.Row] {
		return &dedupFn[K]{spec: spec}
	}, weir.Name(name))
}

type dedupFn[K comparable] struct {
	spec DedupSpec
	kept *weir.ValueState[row.Row, K]
}

func (d *dedupFn[K]) Open(sc *weir.StateContext[K]) error {
	var opts []weir.StateOption
	if d.spec.StateTTL > 0 {
		opts = append(opts, weir.StateTTL(d.spec.StateTTL))
	}
	d.kept = weir.NewValueState[row.Row](sc, "kept", opts...)
	return nil
}

func (d *dedupFn[K]) out(op row.Op, r row.Row) row.Row {
	v := r.V
	if d.spec.WithRowNumber {
		v = append(v[:len(v):len(v)], row.BigInt(1))
	}
	return row.Row{Op: op, V: v}
}

func (d *dedupFn[K]) ProcessElement(ctx *weir.KeyedContext[K, row.Row], in row.Row) error {
	if in.Op != row.Insert {
		return errNotInsert("deduplicate", in)
	}
	old, ok := d.kept.Value()
	if !ok {
		ctx.Emit(d.out(row.Insert, in))
		if !d.spec.KeepLast && d.spec.TimeCol < 0 {
			in = row.Row{} // only the flag is needed
		}
		d.kept.Update(in)
		return nil
	}
	var replace bool
	switch {
	case d.spec.TimeCol < 0:
		replace = d.spec.KeepLast
	case d.spec.KeepLast:
		replace = in.V[d.spec.TimeCol].I >= old.V[d.spec.TimeCol].I
	default:
		replace = in.V[d.spec.TimeCol].I < old.V[d.spec.TimeCol].I
	}
	if !replace {
		return nil
	}
	ctx.Emit(d.out(row.UpdateBefore, old))
	ctx.Emit(d.out(row.UpdateAfter, in))
	d.kept.Update(in)
	return nil
}
