package exec

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// Aggregates are typed as Flink types them.
func TestAggResultTypesAreFlinks(t *testing.T) {
	notNull := func(t types.Type) types.Type { t.NotNull = true; return t }
	for _, c := range []struct {
		fn   string
		in   types.Type
		want string
	}{
		{"COUNT", types.NullType, "BIGINT NOT NULL"},
		{"count", notNull(types.VarcharType), "BIGINT NOT NULL"},
		{"SUM", types.IntType, "INT"},
		{"SUM", notNull(types.BigIntType), "BIGINT"},
		{"SUM", types.DecimalOf(10, 2), "DECIMAL(38, 2)"},
		{"SUM", types.DoubleType, "DOUBLE"},
		{"AVG", types.IntType, "INT"},
		{"AVG", types.BigIntType, "BIGINT"},
		{"AVG", types.DecimalOf(10, 2), "DECIMAL(38, 6)"},
		{"AVG", types.DecimalOf(30, 8), "DECIMAL(38, 8)"},
		{"AVG", types.DoubleType, "DOUBLE"},
		{"MIN", types.VarcharType, "VARCHAR"},
		{"MAX", types.Type{Kind: types.Timestamp, Precision: 3, Time: types.RowTime}, "TIMESTAMP(3)"},
		{"FIRST_VALUE", types.BigIntType, "BIGINT"},
		{"LAST_VALUE", types.VarcharType, "VARCHAR"},
	} {
		got, err := AggResultType(c.fn, false, c.in)
		if err != nil || got.String() != c.want {
			t.Errorf("%s(%s) = %s, %v; want %s", c.fn, c.in, got, err, c.want)
		}
	}
	for _, c := range []struct {
		fn string
		in types.Type
	}{{"SUM", types.VarcharType}, {"AVG", types.BooleanType}, {"MEDIAN", types.IntType}, {"MIN", types.NullType}} {
		if got, err := AggResultType(c.fn, false, c.in); err == nil {
			t.Errorf("%s(%s) = %s, want an error", c.fn, c.in, got)
		}
	}
}

// FIRST_VALUE and LAST_VALUE over an append-only input take a group's
// first and last non-NULL value.
func TestFirstAndLastValueOverAppendOnlyInput(t *testing.T) {
	in := appendInput(21, 300)
	aggs := []AggSpec{{Fn: "FIRST_VALUE", Arg: cX, Filter: -1, In: colTypes[cX]}, {Fn: "LAST_VALUE", Arg: cS, Filter: -1, In: colTypes[cS]}}
	first, last := map[int64]row.Value{}, map[int64]row.Value{}
	for _, r := range in {
		k := r.V[cKey].I
		if _, ok := first[k]; !ok && !r.V[cX].IsNull() {
			first[k] = r.V[cX]
		}
		if !r.V[cS].IsNull() {
			last[k] = r.V[cS]
		}
	}
	var want []string
	for k := range int64(4) {
		want = append(want, text(row.New(row.Int(int32(k)), first[k], last[k])))
	}
	got := fold(t, runRows(t, in, 1, 1, 0, groupBuild([]int{cKey}, aggs, GroupOptions{AppendOnly: true})))
	sameLines(t, "first and last values", got, sorted(want))
}

// product is a user-defined aggregate: the product of BIGINT values,
// retracting by division (for tests, non-zero values only).
type product struct{}

func (product) ResultType(in types.Type) (types.Type, error) {
	if in.Kind != types.BigInt {
		return types.Type{}, fmt.Errorf("PRODUCT takes a BIGINT, not %s", in)
	}
	return types.BigIntType, nil
}

func (product) NewAccumulator() Accumulator { return &productAcc{P: 1} }

type productAcc struct{ P, N int64 }

func (a *productAcc) Accumulate(v row.Value) {
	if !v.IsNull() {
		a.P *= v.I
		a.N++
	}
}
func (a *productAcc) Retract(v row.Value) {
	if !v.IsNull() {
		a.P /= v.I
		a.N--
	}
}
func (a *productAcc) Merge(o Accumulator) { b := o.(*productAcc); a.P *= b.P; a.N += b.N }
func (a *productAcc) Result() row.Value {
	if a.N == 0 {
		return row.Null()
	}
	return row.BigInt(a.P)
}
func (a *productAcc) AppendBinary(dst []byte) ([]byte, error) {
	return binary.AppendVarint(binary.AppendVarint(dst, a.P), a.N), nil
}
func (a *productAcc) DecodeBinary(src []byte) (int, error) {
	p, n := binary.Varint(src)
	if n <= 0 {
		return 0, fmt.Errorf("product: corrupt")
	}
	c, m := binary.Varint(src[n:])
	if m <= 0 {
		return 0, fmt.Errorf("product: corrupt")
	}
	a.P, a.N = p, c
	return n + m, nil
}

// A registered aggregate is typed by its ResultType, retracts through
// Retractor, and merges in sessions.
func TestUserDefinedAggregate(t *testing.T) {
	if err := RegisterAggregate("product", product{}); err != nil {
		t.Fatal(err)
	}
	if err := RegisterAggregate("PRODUCT", product{}); err == nil {
		t.Fatal("a second registration of PRODUCT was accepted")
	}
	if err := RegisterAggregate("sum", product{}); err == nil {
		t.Fatal("a registration of SUM was accepted")
	}
	if !IsAggregate("Product") || IsAggregate("nope") {
		t.Fatal("IsAggregate does not see PRODUCT as registered")
	}
	if _, err := AggResultType("PRODUCT", false, types.IntType); err == nil {
		t.Fatal("PRODUCT(INT) was accepted")
	}
	mk := func(op row.Op, k int32, x int64, ts int64) row.Row {
		r := row.New(row.Int(k), row.BigInt(x), row.Null(), row.Null(), row.Null(), row.Null(), row.Timestamp(ts), row.Null())
		r.Op = op
		return r
	}
	aggs := []AggSpec{{Fn: "product", Arg: cX, Filter: -1, In: types.BigIntType}}
	in := []row.Row{mk(row.Insert, 1, 3, 0), mk(row.Insert, 1, 5, 1), mk(row.Insert, 2, 7, 2), mk(row.Delete, 1, 3, 3)}
	got := fold(t, runRows(t, in, 2, 1, 0, groupBuild([]int{cKey}, aggs, GroupOptions{})))
	sameLines(t, "PRODUCT", got, []string{"+I INT:1 BIGINT:5", "+I INT:2 BIGINT:7"})

	// Sessions: 1000 and 4000 open two sessions that 2500 merges.
	s := WindowSpec{Kind: Session, Gap: 2000 * 1e6, Time: cTime, Keys: []int{cKey}, Aggs: aggs}
	in = []row.Row{mk(row.Insert, 1, 2, 1000), mk(row.Insert, 1, 3, 4000), mk(row.Insert, 1, 5, 2500)}
	got = texts(runRows(t, in, 1, 1, 10_000*1e6, func(in weirStream) weirStream {
		out, err := WindowAggregate(in, s)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}))
	sameLines(t, "PRODUCT in sessions", got, []string{"+I INT:1 TIMESTAMP:1000 TIMESTAMP:6000 BIGINT:30"})
}

// The planner learns from CheckGroupAggs which aggregates cannot run
// over an updating input.
func TestCheckGroupAggsRefusesWhatCannotRetract(t *testing.T) {
	first := []AggSpec{{Fn: "FIRST_VALUE", Arg: 0, Filter: -1, In: types.IntType}}
	if err := CheckGroupAggs(first, true); err != nil {
		t.Errorf("FIRST_VALUE over an append-only input: %v", err)
	}
	if err := CheckGroupAggs(first, false); err == nil {
		t.Error("FIRST_VALUE over an updating input was accepted")
	}
	if err := CheckGroupAggs([]AggSpec{{Fn: "SUM", Arg: -1, Filter: -1, In: types.IntType}}, true); err == nil {
		t.Error("SUM without an argument was accepted")
	}
}
