package exec

import (
	"encoding/binary"
	"fmt"

	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// Aggregates that are simple (compactSlots: COUNT, and SUM, AVG, MIN
// and MAX over integer kinds, over an append-only input) keep their
// accumulators as int64 slots rather than as accumulators: COUNT takes
// one slot (the count), the others two (the count of values, then the
// sum or the extreme's integer). A window aggregation holds them in a
// compactAcc, a group aggregation in one slice per group.

// compactAcc is the slots of a window's aggregates for one key, held in
// the map of weir's window operator itself rather than behind a slice,
// so a row's update touches no other memory and a new key's window
// allocates nothing.
type compactAcc [compactSize]int64

// compactSize is the slots a compactAcc holds.
const compactSize = 4

// compactKinds are the argument kinds whose values a slot holds whole
// and whose order is the order of their integers.
var compactKinds = map[types.Kind]bool{types.Int: true, types.BigInt: true, types.Decimal: true,
	types.Timestamp: true, types.Interval: true}

// compactSlots returns the first slot of each aggregate and the number
// of slots, or false if the aggregates are not all simple: a DISTINCT,
// a user-defined aggregate, FIRST_VALUE or LAST_VALUE, an argument that
// is not of an integer kind, or an input that retracts.
func compactSlots(fns []aggFunc) ([]int, int, bool) {
	at := make([]int, len(fns))
	n := 0
	for i, f := range fns {
		at[i] = n
		switch {
		case f.spec.Distinct || f.retract:
			return nil, 0, false
		case f.kind == fnCount:
			n++
		case f.kind == fnSum || f.kind == fnAvg || f.kind == fnMin || f.kind == fnMax:
			if !compactKinds[f.spec.In.Kind] {
				return nil, 0, false
			}
			n += 2
		default:
			return nil, 0, false
		}
	}
	return at, n, true
}

// addCompact folds row r into the aggregate's slots of a, from at.
func (f *aggFunc) addCompact(a []int64, at int, r row.Row) {
	if c := f.spec.Filter; c >= 0 && (r.V[c].IsNull() || !r.V[c].Bool()) {
		return
	}
	var v row.Value
	if f.spec.Arg >= 0 {
		if v = r.V[f.spec.Arg]; v.IsNull() {
			return
		}
	}
	a[at]++
	switch f.kind {
	case fnSum, fnAvg:
		a[at+1] += v.I
	case fnMin:
		if a[at] == 1 || v.I < a[at+1] {
			a[at+1] = v.I
		}
	case fnMax:
		if a[at] == 1 || v.I > a[at+1] {
			a[at+1] = v.I
		}
	}
}

// mergeCompact merges the slots of b from at into a (session windows).
func (f *aggFunc) mergeCompact(a, b []int64, at int) {
	n, m := a[at], b[at]
	a[at] = n + m
	switch f.kind {
	case fnSum, fnAvg:
		a[at+1] += b[at+1]
	case fnMin, fnMax:
		if m > 0 && (n == 0 || f.kind == fnMin && b[at+1] < a[at+1] || f.kind == fnMax && b[at+1] > a[at+1]) {
			a[at+1] = b[at+1]
		}
	}
}

// resultCompact returns the aggregate's value from its slots.
func (f *aggFunc) resultCompact(a []int64, at int) row.Value {
	acc := accumulator{N: a[at]}
	switch f.kind {
	case fnSum, fnAvg:
		acc.Sum = a[at+1]
	case fnMin, fnMax:
		acc.V = row.Value{K: f.spec.In.Kind, I: a[at+1]}
	}
	return f.result(&acc)
}

// slotsOf returns the slots (n of them, fns[i]'s from at[i]) that hold
// what accumulators accs hold: a group restored from a snapshot of a
// version that kept accumulators for simple aggregates too.
func slotsOf(fns []aggFunc, at []int, n int, accs []accumulator) []int64 {
	s := make([]int64, n)
	for i, f := range fns {
		s[at[i]] = accs[i].N
		switch f.kind {
		case fnSum, fnAvg:
			s[at[i]+1] = accs[i].Sum
		case fnMin, fnMax:
			s[at[i]+1] = accs[i].V.I
		}
	}
	return s
}

// AppendBinary appends the slots as varints; it implements the
// engine's codec.Marshaler, so state snapshots hold a few bytes per
// window and key.
func (a compactAcc) AppendBinary(dst []byte) ([]byte, error) {
	for _, v := range a {
		dst = binary.AppendVarint(dst, v)
	}
	return dst, nil
}

// DecodeBinary decodes what AppendBinary wrote.
func (a *compactAcc) DecodeBinary(src []byte) (int, error) {
	off := 0
	for i := range a {
		v, n := binary.Varint(src[off:])
		if n <= 0 {
			return 0, fmt.Errorf("exec: %w: window accumulator", row.ErrCorrupt)
		}
		a[i], off = v, off+n
	}
	return off, nil
}
