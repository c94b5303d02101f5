package exec

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/task"
)

// oddSum is a residual condition: the second columns of both sides (1
// and 3 of the joined row; left and right are two columns wide) have an
// odd sum.
func oddSum(vals []row.Value) (bool, error) {
	return (vals[1].I+vals[3].I)%2 == 1, nil
}

// bruteJoin joins the final tables of both sides as SQL defines it.
func bruteJoin(spec JoinSpec, ls, rs []row.Row) []string {
	j := &joiner{spec: spec}
	var out []row.Row
	rightMatched := make([]bool, len(rs))
	for _, l := range ls {
		matched := false
		for i, r := range rs {
			if nullKey(l, spec.LeftKeys) || nullKey(r, spec.RightKeys) || string(row.Key(nil, l, spec.LeftKeys)) != string(row.Key(nil, r, spec.RightKeys)) {
				continue
			}
			if ok, _ := j.match(l.V, r.V); ok {
				matched, rightMatched[i] = true, true
				out = append(out, j.concat(row.Insert, l.V, r.V))
			}
		}
		if !matched && spec.Kind.leftOuter() {
			out = append(out, j.concat(row.Insert, l.V, nil))
		}
	}
	for i, r := range rs {
		if !rightMatched[i] && spec.Kind.rightOuter() {
			out = append(out, j.concat(row.Insert, nil, r.V))
		}
	}
	return rowTexts(out)
}

// joinInputs returns two sides of two columns (key, value) with few
// distinct rows, so that duplicates are common, as changelogs.
func joinInputs(seed uint64, n, keys int, retract bool) (llog, lfinal, rlog, rfinal []row.Row) {
	rng := rand.New(rand.NewPCG(seed, 1))
	gen := func(int) row.Row { return bigintRow(randomKey(rng, keys), int64(rng.IntN(4))) }
	llog, lfinal = randomChangelog(rng, n, retract, gen)
	rlog, rfinal = randomChangelog(rng, n, retract, gen)
	return
}

// A regular join of every kind gives, at parallelism 1 and 2, the final
// table SQL defines over the final tables of its inputs, for append-only
// inputs (their sides kept as distinct rows, and, as the planner asks
// for append-only inputs, as lists) and for inputs with retractions, with
// NULL keys and duplicates.
func TestRegularJoinMatchesBruteForce(t *testing.T) { regularJoinMatchesBruteForce(t, nil) }

// The same when distinct rows share their hash: each side keeps the rows
// of one hash side by side.
func TestRegularJoinMatchesBruteForceWhenRowHashesCollide(t *testing.T) {
	regularJoinMatchesBruteForce(t, func(b []byte) uint64 { return task.HashBytes(b) % 3 })
}

func regularJoinMatchesBruteForce(t *testing.T, rowHash func([]byte) uint64) {
	for _, kind := range []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin} {
		for _, in := range []struct{ retract, listed bool }{{false, false}, {false, true}, {true, false}} {
			retract := in.retract
			for _, cond := range []bool{false, true} {
				spec := JoinSpec{Kind: kind, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2, rowHash: rowHash,
					LeftAppendOnly: in.listed, RightAppendOnly: in.listed}
				if cond {
					spec.Cond = oddSum
				}
				llog, lfinal, rlog, rfinal := joinInputs(uint64(kind)*7+1, 300, 6, retract)
				want := bruteJoin(spec, lfinal, rfinal)
				for _, par := range []int{1, 2} {
					name := fmt.Sprintf("%v retract=%v listed=%v cond=%v par=%d", kind, retract, in.listed, cond, par)
					got, _ := runJoinRank(t, false, func(p *weir.Pipeline) weir.Stream[row.Row] {
						return RegularJoin(rowSource(p, "l", llog, -1, 1), rowSource(p, "r", rlog, -1, 1), spec)
					}, weir.WithParallelism(par))
					diffFinalTables(t, name, finalTable(t, got), want)
					if kind == InnerJoin && !retract {
						for _, r := range got {
							if r.Op != row.Insert {
								t.Fatalf("%s: an inner join of append-only inputs emitted %v", name, r.Op)
							}
						}
					}
				}
			}
		}
	}
}

// A full join with retracting inputs gives the failure-free final table
// when run exactly-once under injected failures.
func TestRegularJoinIsExactlyOnceUnderFailures(t *testing.T) {
	llog, _, rlog, _ := joinInputs(5, 20000, 5000, true)
	spec := JoinSpec{Kind: FullJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2, Cond: oddSum}
	checkExactlyOnceUnderFailures(t, func(p *weir.Pipeline) weir.Stream[row.Row] {
		return RegularJoin(rowSource(p, "l", llog, -1, 1), rowSource(p, "r", rlog, -1, 1), spec)
	})
}

// Joins whose sides only insert keep those sides as lists (an inner
// join's both sides, a left join's right side) and give the failure-free
// final table when run exactly-once under injected failures, from
// checkpoints that hold the lists.
func TestRegularJoinsOfAppendOnlySidesAreExactlyOnceUnderFailures(t *testing.T) {
	llog, _, rlog, _ := joinInputs(6, 20000, 5000, false)
	for _, kind := range []JoinKind{InnerJoin, LeftJoin} {
		t.Run(kind.String(), func(t *testing.T) {
			spec := JoinSpec{Kind: kind, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2, Cond: oddSum,
				LeftAppendOnly: true, RightAppendOnly: true}
			checkExactlyOnceUnderFailures(t, func(p *weir.Pipeline) weir.Stream[row.Row] {
				return RegularJoin(rowSource(p, "l", llog, -1, 1), rowSource(p, "r", rlog, -1, 1), spec)
			})
		})
	}
}

// A row that retracts on a side the spec says only inserts fails the job,
// naming the join, the row's op and the side, rather than leave the
// side's list holding a row its input took back.
func TestARetractionOnAnAppendOnlySideFailsTheJob(t *testing.T) {
	spec := JoinSpec{Kind: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2,
		RightAppendOnly: true, Name: "the-join"}
	ls := []row.Row{bigintRow(1, 10)}
	rs := []row.Row{bigintRow(1, 20), opRow(row.Delete, bigintRow(1, 20))}
	p := weir.NewPipeline(weir.WithParallelism(1))
	weir.To(RegularJoin(rowSource(p, "l", ls, -1, 1), rowSource(p, "r", rs, -1, 1), spec), "sink", collection.NewSink[row.Row]())
	err := p.Run(t.Context())
	want := `the-join: exec: join: a -D row reached its right side, whose input only inserts by the plan`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an error containing %q", err, want)
	}
}

func BenchmarkRegularJoin(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func(int) row.Row { return bigintRow(int64(rng.IntN(10000)), int64(rng.IntN(100))) }
	llog, _ := randomChangelog(rng, b.N, false, gen)
	rlog, _ := randomChangelog(rng, b.N, false, gen)
	spec := JoinSpec{Kind: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2}
	b.ResetTimer()
	p := weir.NewPipeline()
	weir.To(RegularJoin(rowSource(p, "l", llog, -1, 1), rowSource(p, "r", rlog, -1, 1), spec), "sink", collection.NewSink[row.Row]())
	if err := p.Run(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(2*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// A left join's unmatched row is emitted padded; when its match arrives
// the padded row is deleted before the pair is inserted, and when the
// match is retracted the pair is deleted and the padded row inserted again
// (Flink's StreamingJoinOperator). The two sides race, so the test accepts
// each order in which the join can see them.
func TestLeftJoinReplacesThePaddedRowWhenTheMatchComesAndGoes(t *testing.T) {
	spec := JoinSpec{Kind: LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2}
	ls := []row.Row{bigintRow(1, 10)}
	rs := []row.Row{bigintRow(1, 20), opRow(row.Delete, bigintRow(1, 20))}
	got, _ := runJoinRank(t, false, func(p *weir.Pipeline) weir.Stream[row.Row] {
		return RegularJoin(rowSource(p, "l", ls, -1, 1), rowSource(p, "r", rs, -1, 1), spec)
	}, weir.WithParallelism(1))
	var seq []string
	for _, r := range got {
		seq = append(seq, r.Op.String()+" "+rowText(r))
	}
	wants := [][]string{
		{"+I 1 10 - -", "-D 1 10 - -", "+I 1 10 1 20", "-D 1 10 1 20", "+I 1 10 - -"}, // left first
		{"+I 1 10 1 20", "-D 1 10 1 20", "+I 1 10 - -"},                               // after the right insert
		{"+I 1 10 - -"}, // after both right rows
	}
	for _, want := range wants {
		if fmt.Sprint(seq) == fmt.Sprint(want) {
			return
		}
	}
	t.Fatalf("got %q, want one of %q", seq, wants)
}

// A side's rows of one hash encode and decode to themselves; a truncated
// encoding is an error wrapping row.ErrCorrupt, never rows.
func TestJoinRowsDecodeWhatTheyEncode(t *testing.T) {
	enc := func(vs ...row.Value) []byte {
		b, _ := row.Row{V: vs}.AppendBinary(nil)
		return b
	}
	rs := joinRows{
		{Row: enc(row.String("a"), row.BigInt(1)), Count: 2, Assoc: -1},
		{Row: enc(row.String(""), row.BigInt(-7)), Count: 1},
	}
	data, _ := rs.AppendBinary([]byte("prefix"))
	data = data[len("prefix"):]
	var got joinRows
	n, err := got.DecodeBinary(data)
	if err != nil || n != len(data) {
		t.Fatalf("decoded %d of %d bytes: %v", n, len(data), err)
	}
	if len(got) != len(rs) {
		t.Fatalf("decoded %d rows, want %d", len(got), len(rs))
	}
	for i := range rs {
		if !bytes.Equal(got[i].Row, rs[i].Row) || got[i].Count != rs[i].Count || got[i].Assoc != rs[i].Assoc {
			t.Errorf("row %d: got %+v, want %+v", i, got[i], rs[i])
		}
	}
	clear(data) // the decoded rows hold their own copy
	for i := range rs {
		if !bytes.Equal(got[i].Row, rs[i].Row) {
			t.Fatalf("row %d changed with the bytes it was decoded from", i)
		}
	}
	data, _ = rs.AppendBinary(nil)
	for cut := range len(data) {
		var r joinRows
		if _, err := r.DecodeBinary(data[:cut]); !errors.Is(err, row.ErrCorrupt) {
			t.Fatalf("%d of %d bytes decoded with %v, want an error wrapping row.ErrCorrupt", cut, len(data), err)
		}
	}
}
