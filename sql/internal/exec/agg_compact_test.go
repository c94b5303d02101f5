package exec

import (
	"testing"

	"github.com/weir-stream/weir/internal/sql/row"
)

// Simple aggregates give the same results from their int64 slots as
// from accumulators, whether a group's rows are folded in one run or in
// two that are merged (session windows), over no rows at all, and from
// slots converted from accumulators (a group of an older snapshot).
func TestCompactAggregatesMatchAccumulators(t *testing.T) {
	var specs []AggSpec
	for _, fn := range []string{"COUNT", "SUM", "AVG", "MIN", "MAX"} {
		for _, c := range []int{cX, cDec, cI, cTime} {
			if c == cTime && (fn == "SUM" || fn == "AVG") {
				continue
			}
			specs = append(specs, AggSpec{Fn: fn, Arg: c, Filter: -1, In: colTypes[c]},
				AggSpec{Fn: fn, Arg: c, Filter: cF, In: colTypes[c]})
		}
	}
	specs = append(specs, AggSpec{Fn: "COUNT", Arg: -1, Filter: -1}, AggSpec{Fn: "COUNT", Arg: -1, Filter: cF})
	fns, err := compileAggs(specs, false)
	if err != nil {
		t.Fatal(err)
	}
	at, n, ok := compactSlots(fns)
	if !ok {
		t.Fatal("the aggregates are not simple")
	}
	in := appendInput(5, 400)
	for _, split := range []int{0, 1, 137, len(in)} {
		for _, rows := range [][]row.Row{in, in[:0]} {
			split := min(split, len(rows))
			accs, left, right := make([]accumulator, len(fns)), make([]int64, n), make([]int64, n)
			for i, r := range rows {
				slots := left
				if i >= split {
					slots = right
				}
				for j := range fns {
					fns[j].add(&accs[j], r, 1)
					fns[j].addCompact(slots, at[j], r)
				}
			}
			restored := slotsOf(fns, at, n, accs)
			for j := range fns {
				if got, want := fns[j].resultCompact(restored, at[j]), fns[j].result(&accs[j]); got != want {
					t.Errorf("%d rows: %s(%d) FILTER %d = %v from slots converted from accumulators, %v from them",
						len(rows), specs[j].Fn, specs[j].Arg, specs[j].Filter, got.Text(), want.Text())
				}
				fns[j].mergeCompact(left, right, at[j])
				if got, want := fns[j].resultCompact(left, at[j]), fns[j].result(&accs[j]); got != want {
					t.Errorf("%d rows split at %d: %s(%d) FILTER %d = %v from slots, %v from accumulators",
						len(rows), split, specs[j].Fn, specs[j].Arg, specs[j].Filter, got.Text(), want.Text())
				}
			}
		}
	}
	var a compactAcc
	copy(a[:], []int64{-3, 1 << 40, 0, 7})
	b, _ := a.AppendBinary(nil)
	var back compactAcc
	if k, err := back.DecodeBinary(b); err != nil || k != len(b) || back != a {
		t.Errorf("compactAcc round trip: %v, %d of %d bytes, %v", back, k, len(b), err)
	}
	if _, err := back.DecodeBinary(b[:3]); err == nil {
		t.Error("a truncated compactAcc decoded")
	}
}
