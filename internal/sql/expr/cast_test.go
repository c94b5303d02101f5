package expr

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/sql/funcs"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

func TestCastMatrixFollowsFlink(t *testing.T) {
	dec := func(p, s int32) types.Type { return types.DecimalOf(p, s) }
	lit := func(v row.Value, t types.Type) Expr { return &Lit{V: v, T: t} }
	vs := func(s string) Expr { return str(s) }
	tests := []struct {
		name string
		x    Expr
		to   types.Type
		want row.Value
	}{
		{"BIGINT to INT wraps", lit(row.BigInt(1<<32+5), types.BigIntType), types.IntType, row.Int(5)},
		{"INT to BIGINT", num(t, "7"), types.BigIntType, row.BigInt(7)},
		{"INT to DOUBLE", num(t, "7"), types.DoubleType, row.Double(7)},
		{"INT to DECIMAL scales up", num(t, "7"), dec(5, 2), row.Decimal(700)},
		{"INT to a too small DECIMAL is NULL", num(t, "1000"), dec(3, 0), null},
		{"INT to BOOLEAN is TRUE unless 0", num(t, "2"), types.BooleanType, row.Bool(true)},
		{"INT to VARCHAR", num(t, "-12"), types.VarcharType, row.String("-12")},
		{"DOUBLE to INT truncates", lit(row.Double(-2.7), types.DoubleType), types.IntType, row.Int(-2)},
		{"DOUBLE to BIGINT saturates", lit(row.Double(1e30), types.DoubleType), types.BigIntType, row.BigInt(math.MaxInt64)},
		{"DOUBLE to DECIMAL rounds HALF_UP", lit(row.Double(1.005), types.DoubleType), dec(5, 2), row.Decimal(101)},
		{"NaN to DECIMAL is NULL", lit(row.Double(math.NaN()), types.DoubleType), dec(5, 2), null},
		{"DOUBLE to VARCHAR as Java writes it", lit(row.Double(1e7), types.DoubleType), types.VarcharType, row.String("1.0E7")},
		{"DECIMAL to INT truncates toward zero", lit(row.Decimal(-1299), dec(6, 2)), types.IntType, row.Int(-12)},
		{"DECIMAL to DOUBLE", lit(row.Decimal(125), dec(5, 2)), types.DoubleType, row.Double(1.25)},
		{"DECIMAL to a smaller scale rounds HALF_UP", lit(row.Decimal(-125), dec(5, 2)), dec(4, 1), row.Decimal(-13)},
		{"DECIMAL rounding past its precision is NULL", lit(row.Decimal(999995), dec(6, 3)), dec(5, 2), null},
		{"DECIMAL to VARCHAR keeps its scale", lit(row.Decimal(150), dec(5, 2)), types.VarcharType, row.String("1.50")},
		{"BOOLEAN to INT", BoolLit(true), types.IntType, row.Int(1)},
		{"BOOLEAN to VARCHAR", BoolLit(false), types.VarcharType, row.String("FALSE")},
		{"VARCHAR to INT", vs(" 42 "), types.IntType, row.Int(42)},
		{"VARCHAR to BIGINT drops a fraction", vs("1.9"), types.BigIntType, row.BigInt(1)},
		{"VARCHAR to DOUBLE", vs("2.5"), types.DoubleType, row.Double(2.5)},
		{"VARCHAR to DECIMAL", vs("3.14159"), dec(5, 3), row.Decimal(3142)},
		{"VARCHAR to BOOLEAN", vs("true"), types.BooleanType, row.Bool(true)},
		{"VARCHAR to TIMESTAMP", vs("2024-03-05 07:08:09.5"), types.TimestampType, row.Timestamp(ts(t, "2024-03-05 07:08:09.500"))},
		{"TIMESTAMP to VARCHAR", mustTS(t, "2024-03-05 07:08:09.5"), types.VarcharType, row.String("2024-03-05 07:08:09.500")},
		{"NULL to anything is NULL", NullLit(), types.IntType, null},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := castOf(t, tt.x, tt.to)
			if got := mustEval(t, e, nil); got != tt.want {
				t.Errorf("%s = %+v, want %+v", e, got, tt.want)
			}
		})
	}
}

func TestCastOfUnreadableTextFailsAndTryCastIsNull(t *testing.T) {
	for _, to := range []types.Type{types.IntType, types.BigIntType, types.DoubleType, types.DecimalOf(5, 2), types.BooleanType, types.TimestampType} {
		e := castOf(t, channel, to)
		_, err := eval(t, e, []row.Value{3: row.String("abc")})
		if !errors.Is(err, funcs.ErrCast) && !errors.Is(err, funcs.ErrDecimalSyntax) && !errors.Is(err, funcs.ErrTimestampSyntax) {
			t.Errorf("%s of 'abc' gave error %v", e, err)
		}
		try, err := NewCast(channel, to, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := mustEval(t, try, []row.Value{3: row.String("abc")}); got != null {
			t.Errorf("%s of 'abc' = %v, want NULL", try, got)
		}
	}
}

func TestDecimalArithmeticAgreesWithExactArithmetic(t *testing.T) {
	// Brute force: every operation against math/big, rounded HALF_UP to
	// the result type; small operands, and large ones at the widest
	// types where results overflow int64 or the precision (NULL).
	small := []int64{0, 1, -1, 7, -13, 999, 12345, -99999, math.MaxInt32}
	large := []int64{1, -3, math.MaxInt64, math.MinInt64 + 1, 1 << 62, -(1 << 40), 5_000_000_000}
	checkDecimalOps(t, small, []int32{0, 2, 5}, 18)
	checkDecimalOps(t, large, []int32{0, 3, 10, 18}, 38)
}

func checkDecimalOps(t *testing.T, vals []int64, scales []int32, precision int32) {
	for _, sa := range scales {
		for _, sb := range scales {
			ta, tb := types.DecimalOf(precision, sa), types.DecimalOf(precision, sb)
			for _, o := range []string{"+", "-", "*", "/", "%"} {
				rt, err := types.Arithmetic(o, ta, tb)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range vals {
					for _, b := range vals {
						if (o == "/" || o == "%") && b == 0 {
							continue
						}
						e := op(t, o, &Lit{V: row.Decimal(a), T: ta}, &Lit{V: row.Decimal(b), T: tb})
						got := mustEval(t, e, nil)
						want := exactDecimal(o, funcs.NewDecimal(a, sa), funcs.NewDecimal(b, sb), rt)
						if got != want {
							t.Fatalf("%s = %+v at %s, want %+v", e, got, rt, want)
						}
					}
				}
			}
		}
	}
}

// exactDecimal computes a op b through text and funcs.Decimal.
func exactDecimal(o string, a, b funcs.Decimal, rt types.Type) row.Value {
	x, y := bigOf(a), bigOf(b)
	var u int64
	var ok bool
	switch o {
	case "+", "-":
		m := max(a.Scale(), b.Scale())
		x.Mul(x, bigPow10(m-a.Scale()))
		y.Mul(y, bigPow10(m-b.Scale()))
		if o == "-" {
			y.Neg(y)
		}
		u, ok = bigRound(x.Add(x, y), bigPow10(m-rt.Scale))
	case "*":
		u, ok = bigRound(x.Mul(x, y), bigPow10(a.Scale()+b.Scale()-rt.Scale))
	case "/":
		// a/b = x·10^-sa / (y·10^-sb); at scale s: x·10^(s-sa+sb) / y.
		if shift := rt.Scale - a.Scale() + b.Scale(); shift >= 0 {
			u, ok = bigRound(x.Mul(x, bigPow10(shift)), y)
		} else {
			u, ok = bigRound(x, y.Mul(y, bigPow10(-shift)))
		}
	case "%":
		x.Mul(x, bigPow10(rt.Scale-a.Scale()))
		y.Mul(y, bigPow10(rt.Scale-b.Scale()))
		u, ok = x.Rem(x, y).Int64(), true
	}
	if !ok || !fits(u, rt.Precision) {
		return null
	}
	return row.Decimal(u)
}

// bigOf returns a's unscaled value.
func bigOf(a funcs.Decimal) *big.Int {
	u, _ := new(big.Int).SetString(strings.Replace(a.String(), ".", "", 1), 10)
	return u
}
