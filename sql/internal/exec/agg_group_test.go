package exec

import (
	"fmt"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// testAggs is one of every aggregate, argument type, DISTINCT and FILTER.
var testAggs = []AggSpec{
	{Fn: "COUNT", Arg: -1, Filter: -1},
	{Fn: "count", Arg: cX, Filter: -1, In: colTypes[cX]},
	{Fn: "SUM", Arg: cX, Filter: -1, In: colTypes[cX]},
	{Fn: "AVG", Arg: cX, Filter: -1, In: colTypes[cX]},
	{Fn: "MIN", Arg: cX, Filter: -1, In: colTypes[cX]},
	{Fn: "MAX", Arg: cX, Filter: -1, In: colTypes[cX]},
	{Fn: "MIN", Arg: cS, Filter: -1, In: colTypes[cS]},
	{Fn: "MAX", Arg: cS, Filter: -1, In: colTypes[cS]},
	{Fn: "SUM", Arg: cD, Filter: -1, In: colTypes[cD]},
	{Fn: "AVG", Arg: cD, Filter: -1, In: colTypes[cD]},
	{Fn: "SUM", Arg: cDec, Filter: -1, In: colTypes[cDec]},
	{Fn: "AVG", Arg: cDec, Filter: -1, In: colTypes[cDec]},
	{Fn: "SUM", Arg: cI, Filter: -1, In: colTypes[cI]},
	{Fn: "AVG", Arg: cI, Filter: -1, In: colTypes[cI]},
	{Fn: "COUNT", Arg: cX, Distinct: true, Filter: -1, In: colTypes[cX]},
	{Fn: "SUM", Arg: cX, Distinct: true, Filter: cF, In: colTypes[cX]},
	{Fn: "COUNT", Arg: -1, Filter: cF},
	{Fn: "MAX", Arg: cD, Filter: cF, In: colTypes[cD]},
	{Fn: "AVG", Arg: cI, Distinct: true, Filter: -1, In: colTypes[cI]},
	{Fn: "MIN", Arg: cS, Distinct: true, Filter: cF, In: colTypes[cS]},
}

// refAgg computes aggregate s over rows by brute force.
func refAgg(t *testing.T, s AggSpec, rows []row.Row) row.Value {
	var vals []row.Value
	for _, r := range rows {
		if s.Filter >= 0 && !(r.V[s.Filter].K == types.Boolean && r.V[s.Filter].I == 1) {
			continue
		}
		v := row.Bool(true)
		if s.Arg >= 0 {
			v = r.V[s.Arg]
		}
		if v.IsNull() {
			continue
		}
		if s.Distinct {
			dup := false
			for _, w := range vals {
				dup = dup || row.Equal(v, w)
			}
			if dup {
				continue
			}
		}
		vals = append(vals, v)
	}
	fn := map[string]string{"count": "COUNT"}[s.Fn]
	if fn == "" {
		fn = s.Fn
	}
	if fn == "COUNT" {
		return row.BigInt(int64(len(vals)))
	}
	if len(vals) == 0 {
		return row.Null()
	}
	n := int64(len(vals))
	var sum int64
	var fsum float64
	for _, v := range vals {
		sum += v.I
		fsum += v.Float()
	}
	out, err := AggResultType(s.Fn, s.Distinct, s.In)
	if err != nil {
		t.Fatal(err)
	}
	switch fn {
	case "SUM", "AVG":
		if fn == "AVG" {
			sum /= n
			fsum /= float64(n)
		}
		switch s.In.Kind {
		case types.Int:
			return row.Int(int32(sum))
		case types.BigInt:
			return row.BigInt(sum)
		case types.Double:
			return row.Double(fsum)
		}
		if fn == "SUM" {
			return row.Decimal(sum)
		}
		var total int64
		for _, v := range vals {
			total += v.I
		}
		up := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(out.Scale-s.In.Scale)), nil)
		q := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(total), up), big.NewInt(n))
		z, _ := new(big.Int).SetString(q.FloatString(0), 10)
		return row.Decimal(z.Int64())
	}
	best := vals[0]
	for _, v := range vals[1:] {
		if c := row.Compare(v, best); fn == "MIN" && c < 0 || fn == "MAX" && c > 0 {
			best = v
		}
	}
	return best
}

// refGroup is the brute-force group aggregation: the changelog Flink's
// GroupAggFunction emits for in, computed from each group's live rows
// after every input row.
func refGroup(t *testing.T, in []row.Row, keys []int, aggs []AggSpec) []row.Row {
	live := map[string][]row.Row{}
	result := func(r row.Row, rows []row.Row) row.Row {
		var vs []row.Value
		for _, k := range keys {
			vs = append(vs, r.V[k])
		}
		for _, s := range aggs {
			vs = append(vs, refAgg(t, s, rows))
		}
		return row.Row{V: vs}
	}
	var out []row.Row
	for _, r := range in {
		k := string(row.Key(nil, r, keys))
		old := live[k]
		if r.Op.Retracts() {
			if len(old) == 0 {
				continue
			}
			rows := []row.Row{}
			gone := false
			for _, o := range old {
				if !gone && row.EqualValues(o, r) {
					gone = true
					continue
				}
				rows = append(rows, o)
			}
			live[k] = rows
		} else {
			live[k] = append(append([]row.Row(nil), old...), r)
		}
		now := live[k]
		switch {
		case len(old) == 0:
			out = append(out, result(r, now))
		case len(now) == 0:
			d := result(r, old)
			d.Op = row.Delete
			out = append(out, d)
		default:
			before, after := result(r, old), result(r, now)
			if !row.EqualValues(before, after) {
				before.Op, after.Op = row.UpdateBefore, row.UpdateAfter
				out = append(out, before, after)
			}
		}
	}
	return out
}

func groupBuild(keys []int, aggs []AggSpec, o GroupOptions) func(weir.Stream[row.Row]) weir.Stream[row.Row] {
	return func(in weir.Stream[row.Row]) weir.Stream[row.Row] { return GroupAggregate(in, keys, aggs, o) }
}

// At parallelism 1 the group aggregation's changelog is exactly the
// brute-force one, row for row, over an input with deletes and updates.
func TestGroupAggregateEmitsFlinksChangelogRowForRow(t *testing.T) {
	in := changelogInput(1, 600)
	want := refGroup(t, in, []int{cKey}, testAggs)
	got := runRows(t, in, 1, 1, 0, groupBuild([]int{cKey}, testAggs, GroupOptions{}))
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if text(got[i]) != text(want[i]) {
			t.Fatalf("row %d:\n got  %s\n want %s", i, text(got[i]), text(want[i]))
		}
	}
}

// At parallelism 2, keyed and global aggregations over an updating
// input end in the brute-force final table. Keys of integer columns are
// also keyed by their values (IntKeys), where a NULL of cX (one row in
// eight) is a group of its own.
func TestGroupAggregateFinalTableMatchesBruteForceInParallel(t *testing.T) {
	for seed := uint64(2); seed < 4; seed++ {
		in := changelogInput(seed, 800)
		for _, keys := range [][]int{{cKey}, {cKey, cS}, nil, {cX}, {cKey, cX}} {
			o := GroupOptions{IntKeys: len(keys) > 0 && !slices.Contains(keys, cS)}
			want := fold(t, refGroup(t, in, keys, testAggs))
			for _, par := range []int{1, 2} {
				// One source subtask keeps each row before its retraction.
				got := fold(t, runRows(t, in, par, 1, 0, groupBuild(keys, testAggs, o)))
				sameLines(t, fmt.Sprintf("group aggregate by %v (integer keys %v)", keys, o.IntKeys), got, want)
			}
		}
	}
}

// Over an append-only input, MIN and MAX keep only their value, with
// the same results.
func TestGroupAggregateOverAppendOnlyInput(t *testing.T) {
	var in []row.Row
	for _, r := range changelogInput(5, 900) {
		if r.Op == row.Insert {
			in = append(in, r)
		}
	}
	want := refGroup(t, in, []int{cKey}, testAggs)
	for _, par := range []int{1, 2} {
		got := runRows(t, in, par, par, 0, groupBuild([]int{cKey}, testAggs, GroupOptions{AppendOnly: true}))
		sameLines(t, "append-only group aggregate", fold(t, got), fold(t, want))
	}
}

// When every row of a group is retracted, its row is deleted and a new
// row for the key starts with +I.
func TestGroupAggregateDeletesAGroupWhoseRowsAreAllRetracted(t *testing.T) {
	a := row.New(row.Int(1), row.BigInt(5), row.Null(), row.Null(), row.Null(), row.Null(), row.Timestamp(0), row.Null())
	b := a.Clone()
	b.V[cX] = row.BigInt(7)
	del := func(r row.Row) row.Row { r = r.Clone(); r.Op = row.Delete; return r }
	in := []row.Row{a, b, del(a), del(b), b}
	aggs := []AggSpec{{Fn: "COUNT", Arg: -1, Filter: -1}, {Fn: "MAX", Arg: cX, Filter: -1, In: types.BigIntType}}
	got := runRows(t, in, 1, 1, 0, groupBuild([]int{cKey}, aggs, GroupOptions{}))
	want := []string{"+I INT:1 BIGINT:1 BIGINT:5", "-U INT:1 BIGINT:1 BIGINT:5", "+U INT:1 BIGINT:2 BIGINT:7",
		"-U INT:1 BIGINT:2 BIGINT:7", "+U INT:1 BIGINT:1 BIGINT:7", "-D INT:1 BIGINT:1 BIGINT:7", "+I INT:1 BIGINT:1 BIGINT:7"}
	if len(got) != len(want) {
		t.Fatalf("got %d rows %v, want %v", len(got), got, want)
	}
	for i := range want {
		if text(got[i]) != want[i] {
			t.Errorf("row %d: got %s, want %s", i, text(got[i]), want[i])
		}
	}
}

// With a state time-to-live longer than the run, nothing expires and
// the results are those without one.
func TestGroupAggregateWithAStateTTLLongerThanTheRun(t *testing.T) {
	in := changelogInput(8, 500)
	want := fold(t, refGroup(t, in, []int{cKey}, testAggs))
	got := fold(t, runRows(t, in, 2, 1, 0, groupBuild([]int{cKey}, testAggs, GroupOptions{StateTTL: time.Hour})))
	sameLines(t, "group aggregate with a state TTL", got, want)
}
