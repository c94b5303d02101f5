package expr

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/sql/funcs"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

func TestOperatorsFollowFlink(t *testing.T) {
	vals := bid(t, 10, 3, "c", "u", "2024-01-01 00:00:00", "e")
	n := NullLit()
	maxInt := num(t, "2147483647")
	tests := []struct {
		name string
		e    Expr
		want row.Value
	}{
		{"INT + INT wraps at 32 bits", op(t, "+", maxInt, num(t, "1")), row.Int(math.MinInt32)},
		{"BIGINT * BIGINT wraps at 64 bits", op(t, "*", num(t, "9223372036854775807"), num(t, "2")), row.BigInt(-2)},
		{"integer division truncates toward zero", op(t, "/", num(t, "-7"), num(t, "2")), row.Int(-3)},
		{"integer % takes the dividend's sign", op(t, "%", num(t, "-7"), num(t, "3")), row.Int(-1)},
		{"INT + BIGINT is a BIGINT", op(t, "+", intCol, auction), row.BigInt(15)},
		{"DOUBLE division by zero is infinity", op(t, "/", dblCol, num(t, "0")), row.Double(math.Inf(1))},
		{"DECIMAL + INT keeps the decimal's scale", op(t, "+", decCol, intCol), row.Decimal(1750)},
		{"DECIMAL(3, 2) / INT has scale 2+10+1 and rounds HALF_UP", op(t, "/", num(t, "2.00"), num(t, "3")), row.Decimal(6666666666667)},
		{"DECIMAL division of a negative rounds away from zero", op(t, "/", op(t, "NEG", num(t, "2.00")), num(t, "3")), row.Decimal(-6666666666667)},
		{"DECIMAL * DECIMAL multiplies exactly", op(t, "*", decCol, num(t, "0.5")), row.Decimal(6250)},
		{"DECIMAL % DECIMAL is the remainder", op(t, "%", num(t, "7.5"), num(t, "2")), row.Decimal(15)},
		{"DECIMAL beyond its precision is NULL", op(t, "*", num(t, "999999999999999999"), num(t, "99.0")), null},
		{"DOUBLE + DECIMAL is a DOUBLE", op(t, "+", dblCol, decCol), row.Double(15)},
		{"NEG of an INT", op(t, "NEG", intCol), row.Int(-5)},
		{"NEG of a DECIMAL", op(t, "NEG", decCol), row.Decimal(-1250)},
		{"+ with NULL is NULL", op(t, "+", price, n), null},
		{"= compares INT with BIGINT on BIGINT", op(t, "=", intCol, num(t, "5")), row.Bool(true)},
		{"< compares DECIMAL with INT on their common decimal", op(t, "<", decCol, num(t, "13")), row.Bool(true)},
		{"<> on strings", op(t, "!=", channel, str("c")), row.Bool(false)},
		{">= on timestamps", op(t, ">=", dateTime, mustTS(t, "2023-12-31 23:59:59")), row.Bool(true)},
		{"= with NULL is NULL", op(t, "=", price, n), null},
		{"IS DISTINCT FROM NULL is TRUE for a value", op(t, "IS DISTINCT FROM", price, n), row.Bool(true)},
		{"IS NOT DISTINCT FROM: NULL is NULL", op(t, "IS NOT DISTINCT FROM", n, n), row.Bool(true)},
		{"FALSE AND NULL is FALSE", op(t, "AND", BoolLit(false), n), row.Bool(false)},
		{"TRUE AND NULL is NULL", op(t, "AND", BoolLit(true), n), null},
		{"NULL OR TRUE is TRUE", op(t, "OR", n, BoolLit(true)), row.Bool(true)},
		{"NULL OR FALSE is NULL", op(t, "OR", n, BoolLit(false)), null},
		{"NOT NULL is NULL", op(t, "NOT", n), null},
		{"NOT TRUE is FALSE", op(t, "NOT", boolCol), row.Bool(false)},
		{"|| concatenates", op(t, "||", channel, str("!")), row.String("c!")},
		{"|| with NULL is NULL", op(t, "||", channel, n), null},
		{"IS NULL of NULL", op(t, "IS NULL", n), row.Bool(true)},
		{"IS NOT NULL of a value", op(t, "IS NOT NULL", price), row.Bool(true)},
		{"IS TRUE of NULL is FALSE", op(t, "IS TRUE", n), row.Bool(false)},
		{"IS NOT TRUE of NULL is TRUE", op(t, "IS NOT TRUE", n), row.Bool(true)},
		{"IS FALSE of FALSE", op(t, "IS FALSE", BoolLit(false)), row.Bool(true)},
		{"IS NOT FALSE of NULL is TRUE", op(t, "IS NOT FALSE", n), row.Bool(true)},
		{"timestamp + interval", op(t, "+", dateTime, IntervalLit(1000)), row.Timestamp(ts(t, "2024-01-01 00:00:01"))},
		{"interval - interval", op(t, "-", IntervalLit(5), IntervalLit(7)), row.Interval(-2)},
		{"IN finds a value", in(t, price, false, num(t, "1"), num(t, "3")), row.Bool(true)},
		{"NOT IN with a NULL in the list and no match is NULL", in(t, price, true, num(t, "1"), n), null},
		{"IN of NULL is NULL", in(t, n, false, num(t, "1")), null},
		{"CASE without ELSE gives NULL", cases(t, nil, When{BoolLit(false), num(t, "1")}), null},
		{"CASE widens its results", cases(t, price, When{op(t, "IS NULL", n), num(t, "1")}), row.BigInt(1)},
		{"COALESCE skips NULLs", call(t, "COALESCE", n, price, num(t, "1")), row.BigInt(3)},
		{"IF picks by condition", call(t, "IF", boolCol, str("y"), str("n")), row.String("y")},
		{"NULLIF of equals is NULL", call(t, "NULLIF", price, num(t, "3")), null},
		{"GREATEST of numbers", call(t, "GREATEST", intCol, price, num(t, "4")), row.BigInt(5)},
		{"LEAST of decimals", call(t, "LEAST", decCol, num(t, "0.5")), row.Decimal(50)},
		{"ABS of a DECIMAL", call(t, "ABS", op(t, "NEG", decCol)), row.Decimal(1250)},
		{"ROUND of a DECIMAL rounds HALF_UP to its digits", call(t, "ROUND", decCol, num(t, "1")), row.Decimal(125)},
		{"ROUND of a DECIMAL to no digits", call(t, "ROUND", decCol), row.Decimal(13)},
		{"FLOOR of a DECIMAL has scale 0", call(t, "FLOOR", op(t, "NEG", decCol)), row.Decimal(-13)},
		{"CEIL of a DECIMAL has scale 0", call(t, "CEIL", decCol), row.Decimal(13)},
		{"ROUND of a DOUBLE", call(t, "ROUND", dblCol), row.Double(3)},
		{"FLOOR of an INT is itself", call(t, "FLOOR", intCol), row.Int(5)},
		{"SUBSTRING without length runs to the end", call(t, "SUBSTRING", str("hello"), num(t, "2")), row.String("ello")},
		{"SUBSTRING with length", call(t, "SUBSTR", str("hello"), num(t, "2"), num(t, "2")), row.String("el")},
		{"CONCAT joins", call(t, "CONCAT", channel, str("-"), url), row.String("c-u")},
		{"CONCAT_WS skips NULLs", call(t, "CONCAT_WS", str(","), channel, n, url), row.String("c,u")},
		{"TRIM removes characters of the set", call(t, "TRIM", str("x"), str("xxaxx")), row.String("a")},
		{"EXTRACT a unit", call(t, "EXTRACT", str("YEAR"), dateTime), row.BigInt(2024)},
		{"LIKE with a constant pattern", call(t, "LIKE", url, str("_")), row.Bool(true)},
		{"REGEXP with an invalid pattern is FALSE", call(t, "REGEXP", url, str("(")), row.Bool(false)},
		{"TO_TIMESTAMP with its default", call(t, "TO_TIMESTAMP", str("2024-01-01 00:00:00")), row.Timestamp(ts(t, "2024-01-01 00:00:00"))},
		{"a strict function is NULL on a NULL argument", call(t, "UPPER", n), null},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustEval(t, tt.e, vals); got != tt.want {
				t.Errorf("%s = %+v, want %+v", tt.e, got, tt.want)
			}
			if got := mustEval(t, tt.e, nulls()); tt.e.Type().NotNull && got.IsNull() {
				t.Errorf("%s is NOT NULL but gave NULL", tt.e)
			}
		})
	}
}

func mustTS(t testing.TB, s string) Expr {
	l, err := TimestampLit(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func in(t testing.TB, x Expr, not bool, list ...Expr) Expr {
	e, err := NewIn(x, list, not)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func cases(t testing.TB, els Expr, whens ...When) Expr {
	e, err := NewCase(whens, els)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestDivisionByZeroFailsNamingTheExpression(t *testing.T) {
	vals := bid(t, 10, 0, "c", "u", "2024-01-01 00:00:00", "e")
	for _, e := range []Expr{
		op(t, "/", auction, price),
		op(t, "%", auction, price),
		call(t, "MOD", auction, price),
		op(t, "/", decCol, op(t, "-", decCol, decCol)),
	} {
		_, err := eval(t, e, vals)
		if !errors.Is(err, funcs.ErrDivisionByZero) || !strings.Contains(err.Error(), e.String()) {
			t.Errorf("%s: error %v, want division by zero naming the expression", e, err)
		}
	}
}

func TestBindingErrorsSayWhatCannotBeCombined(t *testing.T) {
	tests := []struct {
		name string
		bind func() error
		want string
	}{
		{"comparing a string with a number", func() error { _, err := NewOp("=", channel, price); return err }, "cannot compare VARCHAR with BIGINT"},
		{"adding a string", func() error { _, err := NewOp("+", channel, price); return err }, "cannot apply + to VARCHAR and BIGINT"},
		{"AND of a number", func() error { _, err := NewOp("AND", price, boolCol); return err }, "AND takes BOOLEAN arguments, got BIGINT"},
		{"SPLIT_INDEX with a wrong argument", func() error { _, err := NewCall("SPLIT_INDEX", []Expr{price}); return err },
			"SPLIT_INDEX takes (VARCHAR, VARCHAR, INT), got (BIGINT)"},
		{"an unknown function", func() error { _, err := NewCall("NOPE", nil); return err }, "unknown function NOPE"},
		{"a cast Flink does not have", func() error { _, err := NewCast(boolCol, types.TimestampType, false); return err }, "cannot cast BOOLEAN to TIMESTAMP(3)"},
		{"CASE of a string and a number", func() error { _, err := NewCase([]When{{boolCol, str("a")}}, price); return err }, "CASE cannot combine BIGINT with VARCHAR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.bind()
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := NewCall("nope", nil); !errors.Is(err, ErrUnknownFunction) {
		t.Errorf("unknown function error %v does not wrap ErrUnknownFunction", err)
	}
}

func TestNumberLiteralsAreTypedAsWritten(t *testing.T) {
	for text, want := range map[string]string{
		"1": "INT NOT NULL", "2147483648": "BIGINT NOT NULL", "0.908": "DECIMAL(3, 3) NOT NULL",
		"12.50": "DECIMAL(4, 2) NOT NULL", "1e3": "DOUBLE NOT NULL", "1.5E-2": "DOUBLE NOT NULL",
	} {
		if got := num(t, text).Type().String(); got != want {
			t.Errorf("%s is %s, want %s", text, got, want)
		}
	}
}

func TestFoldEvaluatesConstantsOnly(t *testing.T) {
	if v, ok := Fold(op(t, "*", num(t, "6"), num(t, "7"))); !ok || v != row.Int(42) {
		t.Errorf("Fold(6 * 7) = %v, %v", v, ok)
	}
	if _, ok := Fold(op(t, "+", price, num(t, "1"))); ok {
		t.Error("Fold folded an expression on a column")
	}
	if _, ok := Fold(op(t, "/", num(t, "1"), num(t, "0"))); ok {
		t.Error("Fold folded a division by zero")
	}
}

func TestUserFunctionsAreCalledWithCastArguments(t *testing.T) {
	twice := &ScalarFunc{Name: "twice", Args: []types.Type{types.BigIntType}, Result: types.BigIntType, Strict: true,
		Eval: func(args []row.Value) (row.Value, error) { return row.BigInt(2 * args[0].I), nil }}
	e, err := NewUDF(twice, []Expr{intCol})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustEval(t, e, bid(t, 1, 1, "", "", "2024-01-01", "")); got != row.BigInt(10) {
		t.Errorf("twice(i) = %v", got)
	}
	if got := mustEval(t, e, nulls()); got != null {
		t.Errorf("strict twice(NULL) = %v", got)
	}
	if e.String() != "twice(CAST(i AS BIGINT))" {
		t.Errorf("String = %s", e)
	}
}

func TestRoundingFunctionsTakeFlinksDecimalTypes(t *testing.T) {
	for _, tt := range []struct {
		e    Expr
		want string
	}{
		{call(t, "ROUND", decCol, num(t, "1")), "DECIMAL(10, 1)"},
		{call(t, "ROUND", decCol), "DECIMAL(9, 0)"},
		{call(t, "ROUND", decCol, intCol), "DECIMAL(10, 2)"},
		{call(t, "FLOOR", decCol), "DECIMAL(10, 0)"},
		{call(t, "ABS", decCol), "DECIMAL(10, 2)"},
	} {
		if got := tt.e.Type().String(); got != tt.want {
			t.Errorf("%s is %s, want %s", tt.e, got, tt.want)
		}
	}
}
