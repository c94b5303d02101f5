package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/internal/sql/row"
)

// rankRows returns a changelog of rows (partition, order value, id) whose
// order values are distinct, so that the ranks do not depend on arrival
// order, and its final rows.
func rankRows(seed uint64, n, parts int, retract bool) (log, final []row.Row) {
	rng := rand.New(rand.NewPCG(seed, 3))
	gen := func(i int) row.Row { return bigintRow(randomKey(rng, parts), int64(i*7919%100_003), int64(i)) }
	return randomChangelog(rng, n, retract, gen)
}

// bruteRank ranks the final rows of each group (by the group columns) as
// SQL defines it.
func bruteRank(spec RankSpec, group []int, rows []row.Row) []string {
	groups := map[string][]row.Row{}
	for _, r := range rows {
		k := string(row.Key(nil, r, group))
		groups[k] = append(groups[k], r)
	}
	var out []row.Row
	for _, g := range groups {
		slices.SortStableFunc(g, func(a, b row.Row) int { return rankCompare(spec.Order, a, b) })
		for i, r := range rankWindow(g, spec.start(), spec.End) {
			out = append(out, rankedRow(spec, row.Insert, r, spec.start()+int64(i)))
		}
	}
	return rowTexts(out)
}

// Rank gives, at parallelism 1 and 2, a changelog whose final table is
// the rows numbered Start to End of each partition, with and without the
// row number, for append-only and retracting input, partitioned by the
// key's encoding or (every other case) by its value as an integer key,
// where a NULL key (one row in ten) is a partition of its own.
func TestRankMatchesBruteForce(t *testing.T) {
	for _, updating := range []bool{false, true} {
		for _, rn := range []bool{false, true} {
			for i, rng := range [][2]int64{{1, 3}, {2, 4}} {
				spec := RankSpec{PartitionKeys: []int{0}, Order: []RankKey{{Col: 1, Desc: true, NullsLast: true}},
					Start: rng[0], End: rng[1], WithRowNumber: rn, Updating: updating, IntKeys: i == 1}
				log, final := rankRows(uint64(rng[0]), 500, 8, updating)
				want := bruteRank(spec, spec.PartitionKeys, final)
				for _, par := range []int{1, 2} {
					got, _ := runJoinRank(t, false, func(p *weir.Pipeline) weir.Stream[row.Row] {
						return Rank(rowSource(p, "in", log, -1, 1), spec)
					}, weir.WithParallelism(par))
					diffFinalTables(t, fmt.Sprintf("updating=%v rownum=%v range=%v integer keys=%v par=%d", updating, rn, rng, spec.IntKeys, par), finalTable(t, got), want)
				}
			}
		}
	}
}

// Rank over a retracting input gives the failure-free result when run
// exactly-once under injected failures.
func TestRankIsExactlyOnceUnderFailures(t *testing.T) {
	log, _ := rankRows(9, 20000, 500, true)
	spec := RankSpec{PartitionKeys: []int{0}, Order: []RankKey{{Col: 1}}, End: 3, WithRowNumber: true, Updating: true}
	checkExactlyOnceUnderFailures(t, func(p *weir.Pipeline) weir.Stream[row.Row] {
		return Rank(rowSource(p, "in", log, -1, 1), spec)
	})
}

// Rank over an append-only input with row numbers, whose state keeps the
// rows as emitted, partitioned by an integer key (as the planner
// partitions q19), gives the failure-free result when run exactly-once
// under injected failures.
func TestAppendOnlyRankWithRowNumbersIsExactlyOnceUnderFailures(t *testing.T) {
	log, _ := rankRows(11, 20000, 500, false)
	spec := RankSpec{PartitionKeys: []int{0}, IntKeys: true, Order: []RankKey{{Col: 1, Desc: true}}, Start: 2, End: 4, WithRowNumber: true}
	checkExactlyOnceUnderFailures(t, func(p *weir.Pipeline) weir.Stream[row.Row] {
		return Rank(rowSource(p, "in", log, -1, 1), spec)
	})
}

// A top restored from a snapshot whose rows held no row numbers gets
// them, in rank order, before a row is added to it; a numbered top
// restored where the rows are kept without numbers loses them.
func TestATopRestoredWithoutRowNumbersIsNumbered(t *testing.T) {
	st := numberTop(rankTop{Rows: []row.Row{bigintRow(9, 1), bigintRow(8, 2), bigintRow(7, 3)}, Total: 3})
	var got []string
	for _, r := range st.Rows {
		got = append(got, rowText(r))
	}
	if want := []string{"9 1 1", "8 2 2", "7 3 3"}; !st.Numbered || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("numbered %v, rows %q; want rows %q", st.Numbered, got, want)
	}
	if again := numberTop(st); len(again.Rows[0].V) != 3 {
		t.Fatalf("a numbered top was numbered again: %v", rowText(again.Rows[0]))
	}
	plain := plainTop(st)
	if got := rowText(plain.Rows[2]); plain.Numbered || got != "7 3" {
		t.Fatalf("a numbered top made plain: numbered %v, its last row %q; want \"7 3\"", plain.Numbered, got)
	}
}

// dedupRows returns rows (key, time, value) with distinct times.
func dedupRows(n, keys int) []row.Row {
	rng := rand.New(rand.NewPCG(uint64(n), 5))
	out := make([]row.Row, n)
	for i := range out {
		out[i] = bigintRow(randomKey(rng, keys), int64(i*7919%100_003), int64(rng.IntN(100)))
	}
	return out
}

// Deduplicate keeps, per key, the first row to arrive (processing time),
// the row of the earliest or of the latest rowtime, with and without the
// row number, at parallelism 1 and 2; keeping the first in processing time
// is append-only. Keys of one or two columns are keyed by their encoding
// or, as integer keys, by their values; a NULL key (one row in ten) is a
// key of its own, not 0's.
func TestDeduplicateMatchesBruteForce(t *testing.T) {
	in := dedupRows(2000, 50)
	for i, c := range []struct {
		timeCol  int
		keepLast bool
	}{{-1, false}, {-1, true}, {1, false}, {1, true}} {
		for j, rn := range []bool{false, true} {
			spec := DedupSpec{Keys: []int{0}, TimeCol: c.timeCol, KeepLast: c.keepLast, WithRowNumber: rn}
			// Each case with integer keys too, half of them of two columns.
			spec.IntKeys = (i+j)%3 != 0
			if (i+j)%2 == 1 {
				spec.Keys = []int{0, 2}
			}
			kept := map[string]row.Row{}
			for _, r := range in {
				k := string(row.Key(nil, r, spec.Keys))
				old, ok := kept[k]
				switch {
				case !ok, c.timeCol < 0 && c.keepLast,
					c.timeCol >= 0 && c.keepLast && r.V[1].I >= old.V[1].I,
					c.timeCol >= 0 && !c.keepLast && r.V[1].I < old.V[1].I:
					kept[k] = r
				}
			}
			var want []row.Row
			for _, r := range kept {
				want = append(want, rankedRow(RankSpec{WithRowNumber: rn}, row.Insert, r, 1))
			}
			for _, par := range []int{1, 2} {
				got, _ := runJoinRank(t, false, func(p *weir.Pipeline) weir.Stream[row.Row] {
					return Deduplicate(rowSource(p, "in", in, -1, 1), spec)
				}, weir.WithParallelism(par))
				name := fmt.Sprintf("%+v keys %v (integer %v) par %d", c, spec.Keys, spec.IntKeys, par)
				diffFinalTables(t, name, finalTable(t, got), rowTexts(want))
				if c.timeCol < 0 && !c.keepLast && len(got) != len(want) {
					t.Fatalf("%s: keep-first emitted %d rows for %d keys", name, len(got), len(want))
				}
			}
		}
	}
}

// Deduplicate keeping the last row gives the failure-free result when run
// exactly-once under injected failures.
func TestDeduplicateIsExactlyOnceUnderFailures(t *testing.T) {
	in := dedupRows(30000, 3000)
	for _, ints := range []bool{false, true} {
		t.Run(fmt.Sprintf("integer keys %v", ints), func(t *testing.T) {
			checkExactlyOnceUnderFailures(t, func(p *weir.Pipeline) weir.Stream[row.Row] {
				return Deduplicate(rowSource(p, "in", in, -1, 1), DedupSpec{Keys: []int{0}, IntKeys: ints, TimeCol: 1, KeepLast: true})
			})
		})
	}
}

// windowRankRows returns rows (key, window_start, window_end, value, id).
func windowRankRows(n, keys int) []row.Row {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	out := windowedRows(rng, n, keys)
	for i := range out {
		out[i].V = append(out[i].V, row.BigInt(int64(i)))
	}
	return out
}

func windowRankSpec(rn bool) RankSpec {
	return RankSpec{PartitionKeys: []int{0}, Order: []RankKey{{Col: 3, Desc: true}, {Col: 4}},
		Start: 1, End: 3, WithRowNumber: rn, WindowStart: 1, WindowEnd: 2}
}

// A window TopN emits, once per window and partition, its top rows as
// inserts, at parallelism 1 and 2.
func TestWindowRankMatchesBruteForce(t *testing.T) {
	in := windowRankRows(2000, 10)
	for _, rn := range []bool{false, true} {
		spec := windowRankSpec(rn)
		want := bruteRank(spec, []int{0, 1, 2}, in)
		for _, par := range []int{1, 2} {
			got, _ := runJoinRank(t, false, func(p *weir.Pipeline) weir.Stream[row.Row] {
				return WindowRank(rowSource(p, "in", in, 1, par), spec)
			}, weir.WithParallelism(par))
			for _, r := range got {
				if r.Op != row.Insert {
					t.Fatalf("a window TopN emitted %v", r.Op)
				}
			}
			diffFinalTables(t, fmt.Sprintf("rownum=%v par %d", rn, par), rowTexts(got), want)
		}
	}
}

// A window TopN gives the failure-free result when run exactly-once under
// injected failures.
func TestWindowRankIsExactlyOnceUnderFailures(t *testing.T) {
	in := windowRankRows(30000, 3000)
	checkExactlyOnceUnderFailures(t, func(p *weir.Pipeline) weir.Stream[row.Row] {
		return WindowRank(rowSource(p, "in", in, 1, 2), windowRankSpec(true))
	})
}

func BenchmarkRank(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([]row.Row, b.N)
	for i := range in {
		in[i] = bigintRow(int64(rng.IntN(1000)), int64(rng.IntN(1_000_000)))
	}
	spec := RankSpec{PartitionKeys: []int{0}, Order: []RankKey{{Col: 1, Desc: true, NullsLast: true}}, End: 10, WithRowNumber: true}
	b.ResetTimer()
	p := weir.NewPipeline()
	weir.To(Rank(rowSource(p, "in", in, -1, 1), spec), "sink", collection.NewSink[row.Row]())
	if err := p.Run(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// An append-only TopN emits Flink's changelog: with the row number, the
// ranks a new row shifts as -U/+U pairs and a newly filled rank as +I;
// without it, -D of the row pushed out and +I of the new one.
func TestRankEmitsFlinksChangelog(t *testing.T) {
	in := []row.Row{bigintRow(5), bigintRow(3), bigintRow(7), bigintRow(1)}
	for _, c := range []struct {
		rn   bool
		want []string
	}{
		{true, []string{"+I 5 1", "-U 5 1", "+U 3 1", "+I 5 2", "-U 3 1", "+U 1 1", "-U 5 2", "+U 3 2"}},
		{false, []string{"+I 5", "+I 3", "-D 5", "+I 1"}},
	} {
		got, _ := runJoinRank(t, false, func(p *weir.Pipeline) weir.Stream[row.Row] {
			return Rank(rowSource(p, "in", in, -1, 1), RankSpec{Order: []RankKey{{Col: 0}}, End: 2, WithRowNumber: c.rn})
		}, weir.WithParallelism(1))
		var seq []string
		for _, r := range got {
			seq = append(seq, r.Op.String()+" "+rowText(r))
		}
		if fmt.Sprint(seq) != fmt.Sprint(c.want) {
			t.Fatalf("row number %v: got %q, want %q", c.rn, seq, c.want)
		}
	}
}

// Deduplication keeping the last row emits +I for a key's first row and
// -U/+U for each newer one; a row older than the kept one (rowtime) is
// dropped.
func TestDeduplicateKeepingTheLastRowEmitsUpdates(t *testing.T) {
	in := []row.Row{bigintRow(1, 10), bigintRow(1, 20), bigintRow(1, 15), bigintRow(2, 5)}
	got, _ := runJoinRank(t, false, func(p *weir.Pipeline) weir.Stream[row.Row] {
		return Deduplicate(rowSource(p, "in", in, -1, 1), DedupSpec{Keys: []int{0}, TimeCol: 1, KeepLast: true})
	}, weir.WithParallelism(1))
	var seq []string
	for _, r := range got {
		seq = append(seq, r.Op.String()+" "+rowText(r))
	}
	want := []string{"+I 1 10", "-U 1 10", "+U 1 20", "+I 2 5"}
	if fmt.Sprint(seq) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", seq, want)
	}
}

// A TopN over an updating input promotes rows from beyond its buffer when
// the top rows are retracted one after another.
func TestRankPromotesRowsWhenTheTopIsRetracted(t *testing.T) {
	var in []row.Row
	for v := range int64(20) {
		in = append(in, bigintRow(0, v))
	}
	for v := range int64(15) {
		in = append(in, opRow(row.Delete, bigintRow(0, v)))
	}
	spec := RankSpec{PartitionKeys: []int{0}, Order: []RankKey{{Col: 1}}, End: 3, WithRowNumber: true, Updating: true}
	got, _ := runJoinRank(t, false, func(p *weir.Pipeline) weir.Stream[row.Row] {
		return Rank(rowSource(p, "in", in, -1, 1), spec)
	}, weir.WithParallelism(1))
	diffFinalTables(t, "final table", finalTable(t, got), []string{"0 15 1", "0 16 2", "0 17 3"})
}
