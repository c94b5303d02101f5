package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// The columns of the rows the aggregation tests generate.
const (
	cKey  = iota // INT, 0..3
	cX           // BIGINT, small, sometimes NULL
	cD           // DOUBLE, halves (sums are exact), sometimes NULL
	cDec         // DECIMAL(10, 2)
	cS           // VARCHAR
	cF           // BOOLEAN filter, sometimes NULL
	cTime        // TIMESTAMP(3), ascending
	cI           // INT
)

var colTypes = []types.Type{types.IntType, types.BigIntType, types.DoubleType, types.DecimalOf(10, 2),
	types.VarcharType, types.BooleanType, types.TimestampType, types.IntType}

// randomRow returns a random +I row at time t.
func randomRow(rng *rand.Rand, keys int, t int64) row.Row {
	maybe := func(v row.Value) row.Value {
		if rng.IntN(8) == 0 {
			return row.Null()
		}
		return v
	}
	return row.New(row.Int(int32(rng.IntN(keys))), maybe(row.BigInt(rng.Int64N(20)-5)),
		maybe(row.Double(float64(rng.IntN(40)-10)/2)), maybe(row.Decimal(rng.Int64N(100000)-20000)),
		maybe(row.String(string(rune('a'+rng.IntN(6))))), maybe(row.Bool(rng.IntN(2) == 0)),
		row.Timestamp(t), maybe(row.Int(int32(rng.IntN(7)-3))))
}

// changelogInput returns n random rows with ops: inserts, deletes and
// update pairs (-U old, +U new with the same key) of rows live at the
// time, in an order where every retraction follows its row.
func changelogInput(seed uint64, n int) []row.Row {
	rng := rand.New(rand.NewPCG(seed, 7))
	var live, out []row.Row
	for t := int64(0); len(out) < n; t++ {
		switch k := rng.IntN(10); {
		case k < 6 || len(live) == 0:
			r := randomRow(rng, 4, t)
			live = append(live, r)
			out = append(out, r)
		case k < 8:
			i := rng.IntN(len(live))
			d := live[i].Clone()
			d.Op = row.Delete
			live = slices.Delete(live, i, i+1)
			out = append(out, d)
		default:
			i := rng.IntN(len(live))
			before := live[i].Clone()
			before.Op = row.UpdateBefore
			after := randomRow(rng, 4, t)
			after.V[cKey] = before.V[cKey]
			live[i] = after
			after.Op = row.UpdateAfter
			out = append(out, before, after)
			after.Op = row.Insert
		}
	}
	return out
}

// runRows runs build over rows read by a source of parallelism srcPar
// at pipeline parallelism par, with record timestamps from column
// cTime and watermarks trailing them by ooo, and returns what build's
// stream emits.
func runRows(t *testing.T, rows []row.Row, par, srcPar int, ooo time.Duration, build func(weir.Stream[row.Row]) weir.Stream[row.Row]) []row.Row {
	t.Helper()
	p := weir.NewPipeline(weir.WithParallelism(par))
	in := weir.FromSource(p, "rows", collection.Of(rows...), weir.SourceParallelism(srcPar),
		weir.WithTimestamps(func(r row.Row) int64 { return r.V[cTime].I }, ooo))
	sink := collection.NewSink[row.Row]()
	weir.To(build(in), "out", sink)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return sink.Records()
}

// text is a row as a comparable line: its op and its values with their
// kinds.
func text(r row.Row) string {
	var b strings.Builder
	b.WriteString(r.Op.String())
	for _, v := range r.V {
		fmt.Fprintf(&b, " %s:%s", v.K, v.Text())
	}
	return b.String()
}

// fold applies a changelog in order and returns the final table, as
// sorted lines of values (ops stripped). It fails the test on a
// retraction of a row not in the table.
func fold(t *testing.T, rows []row.Row) []string {
	t.Helper()
	table := map[string]int{}
	for _, r := range rows {
		k := text(row.Row{V: r.V})
		if r.Op.Retracts() {
			if table[k] == 0 {
				t.Fatalf("changelog retracts %s, not in the table", text(r))
			}
			table[k]--
			continue
		}
		table[k]++
	}
	var out []string
	for k, n := range table {
		for range n {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// texts returns the sorted lines of rows.
func texts(rows []row.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = text(r)
	}
	slices.Sort(out)
	return out
}

func sameLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: the reference is empty; the test would prove nothing", what)
	}
	if slices.Equal(got, want) {
		return
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("%s: %d rows, want %d; first difference:\n got  %s\n want %s", what, len(got), len(want), got[i], want[i])
		}
	}
	t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
}

func newRowSink() *collection.Sink[row.Row] { return collection.NewSink[row.Row]() }

type weirStream = weir.Stream[row.Row]
