package exec

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
)

// timedRows returns n rows (key, time, value) with times in ten minutes.
func timedRows(rng *rand.Rand, n, keys int) []row.Row {
	out := make([]row.Row, n)
	for i := range out {
		out[i] = bigintRow(randomKey(rng, keys), int64(rng.IntN(600_000)), int64(rng.IntN(4)))
	}
	return out
}

// oddValues is a residual condition on rows of three columns: the values
// (columns 2 and 5) have an odd sum.
func oddValues(vals []row.Value) (bool, error) { return (vals[2].I+vals[5].I)%2 == 1, nil }

func intervalSpec() JoinSpec {
	return JoinSpec{Kind: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3,
		LeftTime: 1, RightTime: 1, Lower: -5 * time.Second, Upper: 10 * time.Second, Cond: oddValues}
}

// An interval join gives, at parallelism 1 and 2, every pair with equal
// keys, the right time within the bounds of the left time and the
// condition true, as inserts.
func TestIntervalJoinMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ls, rs := timedRows(rng, 2000, 20), timedRows(rng, 2000, 20)
	spec := intervalSpec()
	var want []row.Row
	j := &joiner{spec: spec}
	for _, l := range ls {
		for _, r := range rs {
			lt, rt := l.V[1].I, r.V[1].I
			if !nullKey(l, []int{0}) && !nullKey(r, []int{0}) && l.V[0].I == r.V[0].I && rt >= lt-5000 && rt <= lt+10000 {
				if ok, _ := oddValues(j.concat(row.Insert, l.V, r.V).V); ok {
					want = append(want, j.concat(row.Insert, l.V, r.V))
				}
			}
		}
	}
	for _, par := range []int{1, 2} {
		got, _ := runJoinRank(t, false, func(p *weir.Pipeline) weir.Stream[row.Row] {
			return IntervalJoin(rowSource(p, "l", ls, 1, par), rowSource(p, "r", rs, 1, par), spec)
		}, weir.WithParallelism(par))
		for _, r := range got {
			if r.Op != row.Insert {
				t.Fatalf("an interval join emitted %v", r.Op)
			}
		}
		diffFinalTables(t, fmt.Sprintf("par %d", par), rowTexts(got), rowTexts(want))
	}
}

// An interval join gives the failure-free result when run exactly-once
// under injected failures.
func TestIntervalJoinIsExactlyOnceUnderFailures(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ls, rs := timedRows(rng, 20000, 5000), timedRows(rng, 20000, 5000)
	checkExactlyOnceUnderFailures(t, func(p *weir.Pipeline) weir.Stream[row.Row] {
		return IntervalJoin(rowSource(p, "l", ls, 1, 2), rowSource(p, "r", rs, 1, 2), intervalSpec())
	})
}

// windowed returns rows (key, window_start, window_end, value) of
// ten-second tumbling windows over ten minutes.
func windowedRows(rng *rand.Rand, n, keys int) []row.Row {
	out := make([]row.Row, n)
	for i := range out {
		ws := int64(rng.IntN(60)) * 10_000
		out[i] = bigintRow(randomKey(rng, keys), ws, ws+10_000, int64(rng.IntN(4)))
	}
	return out
}

func windowSpec(kind JoinKind) JoinSpec {
	return JoinSpec{Kind: kind, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 4, RightWidth: 4,
		LeftWindow: [2]int{1, 2}, RightWindow: [2]int{1, 2},
		Cond: func(v []row.Value) (bool, error) { return (v[3].I+v[7].I)%2 == 1, nil }}
}

// A window join of every kind gives, at parallelism 1 and 2, the join of
// the rows by key and window as SQL defines it, as inserts.
func TestWindowJoinMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ls, rs := windowedRows(rng, 1000, 10), windowedRows(rng, 1000, 10)
	for _, kind := range []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin} {
		spec := windowSpec(kind)
		ref := spec
		ref.LeftKeys, ref.RightKeys = []int{0, 1, 2}, []int{0, 1, 2}
		want := bruteJoin(ref, ls, rs)
		for _, par := range []int{1, 2} {
			got, _ := runJoinRank(t, false, func(p *weir.Pipeline) weir.Stream[row.Row] {
				return WindowJoin(rowSource(p, "l", ls, 1, par), rowSource(p, "r", rs, 1, par), spec)
			}, weir.WithParallelism(par))
			for _, r := range got {
				if r.Op != row.Insert {
					t.Fatalf("a window join emitted %v", r.Op)
				}
			}
			diffFinalTables(t, fmt.Sprintf("%v par %d", kind, par), rowTexts(got), want)
		}
	}
}

// A full window join gives the failure-free result when run exactly-once
// under injected failures.
func TestWindowJoinIsExactlyOnceUnderFailures(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	ls, rs := windowedRows(rng, 20000, 5000), windowedRows(rng, 20000, 5000)
	checkExactlyOnceUnderFailures(t, func(p *weir.Pipeline) weir.Stream[row.Row] {
		return WindowJoin(rowSource(p, "l", ls, 1, 2), rowSource(p, "r", rs, 1, 2), windowSpec(FullJoin))
	})
}

// versions returns a versioned table's changelog (key, time, value): per
// key, rows at distinct times, some of them deletions.
func versionRows(rng *rand.Rand, n, keys int) []row.Row {
	seen := map[[2]int64]bool{}
	var out []row.Row
	for len(out) < n {
		k, ts := int64(rng.IntN(keys)), int64(rng.IntN(600_000))
		if seen[[2]int64{k, ts}] {
			continue
		}
		seen[[2]int64{k, ts}] = true
		r := bigintRow(k, ts, int64(rng.IntN(100)))
		switch rng.IntN(5) {
		case 0:
			r.Op = row.Delete
		case 1, 2:
			r.Op = row.UpdateAfter
			out = append(out, opRow(row.UpdateBefore, bigintRow(k, ts, -5)))
		}
		out = append(out, r)
	}
	return out
}

// bruteTemporal joins each probe row with the version valid at its time.
func bruteTemporal(spec JoinSpec, probes, vs []row.Row) []string {
	j := &joiner{spec: spec}
	var out []row.Row
	for _, l := range probes {
		var best *row.Row
		for i, v := range vs {
			if v.Op == row.UpdateBefore || nullKey(l, []int{0}) || v.V[0].I != l.V[0].I || v.V[1].I > l.V[1].I {
				continue
			}
			if best == nil || v.V[1].I > best.V[1].I {
				best = &vs[i]
			}
		}
		if best != nil && !best.Op.Retracts() {
			if ok, _ := j.match(l.V, best.V); ok {
				out = append(out, j.concat(row.Insert, l.V, best.V))
				continue
			}
		}
		if spec.Kind == LeftJoin {
			out = append(out, j.concat(row.Insert, l.V, nil))
		}
	}
	return rowTexts(out)
}

func temporalSpec(kind JoinKind) JoinSpec {
	return JoinSpec{Kind: kind, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3,
		LeftTime: 1, RightTime: 1, Cond: oddValues}
}

// An event-time temporal join, inner and left, joins every probe row with
// the version of its key valid at its time, at parallelism 1 and 2.
func TestTemporalRowtimeJoinMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	probes, vs := timedRows(rng, 2000, 20), versionRows(rng, 600, 20)
	for _, kind := range []JoinKind{InnerJoin, LeftJoin} {
		spec := temporalSpec(kind)
		want := bruteTemporal(spec, probes, vs)
		for _, par := range []int{1, 2} {
			got, _ := runJoinRank(t, false, func(p *weir.Pipeline) weir.Stream[row.Row] {
				return TemporalRowtimeJoin(rowSource(p, "l", probes, 1, par), rowSource(p, "r", vs, 1, par), spec)
			}, weir.WithParallelism(par))
			diffFinalTables(t, fmt.Sprintf("%v par %d", kind, par), rowTexts(got), want)
		}
	}
}

// An event-time temporal join gives the failure-free result when run
// exactly-once under injected failures.
func TestTemporalRowtimeJoinIsExactlyOnceUnderFailures(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	probes, vs := timedRows(rng, 20000, 2000), versionRows(rng, 10000, 2000)
	checkExactlyOnceUnderFailures(t, func(p *weir.Pipeline) weir.Stream[row.Row] {
		return TemporalRowtimeJoin(rowSource(p, "l", probes, 1, 2), rowSource(p, "r", vs, 1, 2), temporalSpec(LeftJoin))
	})
}

// A lookup join, inner and left, joins every probe row with the table's
// rows of its key, at parallelism 1 and 2.
func TestLookupJoinMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	probes := timedRows(rng, 1000, 30)
	var tbl []row.Row
	for k := range int64(20) {
		tbl = append(tbl, bigintRow(k, 0, k%4), bigintRow(k, 1, k%3))
	}
	for _, kind := range []JoinKind{InnerJoin, LeftJoin} {
		spec := temporalSpec(kind)
		want := bruteJoin(spec, probes, tbl)
		for _, par := range []int{1, 2} {
			got, _ := runJoinRank(t, false, func(p *weir.Pipeline) weir.Stream[row.Row] {
				return LookupJoin(rowSource(p, "l", probes, -1, par), func() ([]row.Row, error) { return tbl, nil }, spec)
			}, weir.WithParallelism(par))
			diffFinalTables(t, fmt.Sprintf("%v par %d", kind, par), rowTexts(got), want)
		}
	}
}
