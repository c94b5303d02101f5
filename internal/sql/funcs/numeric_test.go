package funcs

import (
	"errors"
	"math"
	"testing"
)

func dec(s string) Decimal {
	d, err := ParseDecimal(s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestDivAndModFollowJava(t *testing.T) {
	for _, tc := range []struct{ a, b, div, mod int64 }{
		{7, 2, 3, 1},
		{-7, 2, -3, -1},
		{7, -2, -3, 1},
		{-7, -2, 3, -1},
		{math.MinInt64, -1, math.MinInt64, 0}, // wraps, as Java
	} {
		if got, err := Div(tc.a, tc.b); err != nil || got != tc.div {
			t.Errorf("%d / %d = %d, %v; want %d", tc.a, tc.b, got, err, tc.div)
		}
		if got, err := Mod(tc.a, tc.b); err != nil || got != tc.mod {
			t.Errorf("MOD(%d, %d) = %d, %v; want %d", tc.a, tc.b, got, err, tc.mod)
		}
	}
	if _, err := Div(int32(1), 0); !errors.Is(err, ErrDivisionByZero) {
		t.Errorf("1 / 0: err = %v", err)
	}
	if _, err := Mod(int64(1), 0); !errors.Is(err, ErrDivisionByZero) {
		t.Errorf("MOD(1, 0): err = %v", err)
	}
	if got := ModFloat64(-7.5, 2); got != -1.5 {
		t.Errorf("MOD(-7.5, 2) = %v", got)
	}
	if got := ModFloat64(1, 0); !math.IsNaN(got) {
		t.Errorf("MOD(1.0, 0) = %v, want NaN", got)
	}
}

func TestAbsAndSign(t *testing.T) {
	if got := Abs(int32(-5)); got != 5 {
		t.Errorf("ABS(-5) = %d", got)
	}
	if got := Abs(int64(math.MinInt64)); got != math.MinInt64 {
		t.Errorf("ABS(MIN) = %d, want MIN (Java wraps)", got)
	}
	if got := AbsFloat64(-1.5); got != 1.5 {
		t.Errorf("ABS(-1.5) = %v", got)
	}
	if got := AbsDecimal(dec("-1.50")).String(); got != "1.50" {
		t.Errorf("ABS(-1.50) = %s", got)
	}
	if Sign(int64(-9)) != -1 || Sign(int32(0)) != 0 || Sign(int64(3)) != 1 {
		t.Error("SIGN on integers")
	}
	if SignFloat64(-2.5) != -1 || SignFloat64(0) != 0 || SignFloat64(1e-300) != 1 || !math.IsNaN(SignFloat64(math.NaN())) {
		t.Error("SIGN on doubles")
	}
	if got := SignDecimal(dec("-3.25")).String(); got != "-1.00" {
		t.Errorf("SIGN(-3.25) = %s, want -1.00", got)
	}
}

func TestRoundIsHalfUp(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		d    int32
		want float64
	}{
		{2.5, 0, 3}, {-2.5, 0, -3}, {1.4, 0, 1},
		{2.675, 2, 2.68}, // the decimal text is rounded, not the binary value
		{1.005, 2, 1.01},
		{125.0, -1, 130},
		{-125.0, -1, -130},
		{0.1 + 0.2, 1, 0.3},
		{123.456, 5, 123.456},
	} {
		if got := RoundFloat64(tc.x, tc.d); got != tc.want {
			t.Errorf("ROUND(%v, %d) = %v, want %v", tc.x, tc.d, got, tc.want)
		}
	}
	if got := RoundFloat64(math.Inf(1), 2); !math.IsInf(got, 1) {
		t.Errorf("ROUND(Infinity) = %v", got)
	}
	for _, tc := range []struct {
		x    int64
		d    int32
		want int64
	}{{125, -1, 130}, {-125, -1, -130}, {124, -1, 120}, {7, 2, 7}, {15, -2, 0}, {50, -2, 100}} {
		if got := Round(tc.x, tc.d); got != tc.want {
			t.Errorf("ROUND(%d, %d) = %d, want %d", tc.x, tc.d, got, tc.want)
		}
	}
	for _, tc := range []struct {
		x    string
		d    int32
		want string
	}{{"1.25", 1, "1.3"}, {"-1.25", 1, "-1.3"}, {"1.24", 1, "1.2"}, {"125.0", -1, "130"}, {"1.5", 0, "2"}, {"0.125", 5, "0.12500"}} {
		if got := RoundDecimal(dec(tc.x), tc.d).String(); got != tc.want {
			t.Errorf("ROUND(%s, %d) = %s, want %s", tc.x, tc.d, got, tc.want)
		}
	}
}

func TestFloorAndCeil(t *testing.T) {
	for _, tc := range []struct{ x, floor, ceil string }{
		{"1.5", "1", "2"}, {"-1.5", "-2", "-1"}, {"2", "2", "2"}, {"-0.01", "-1", "0"}, {"0", "0", "0"},
	} {
		if got := FloorDecimal(dec(tc.x)).String(); got != tc.floor {
			t.Errorf("FLOOR(%s) = %s, want %s", tc.x, got, tc.floor)
		}
		if got := CeilDecimal(dec(tc.x)).String(); got != tc.ceil {
			t.Errorf("CEIL(%s) = %s, want %s", tc.x, got, tc.ceil)
		}
	}
	if FloorFloat64(-1.5) != -2 || CeilFloat64(-1.5) != -1 {
		t.Error("FLOOR/CEIL on doubles")
	}
}

func TestMathFunctionsFollowJavasEdgeCases(t *testing.T) {
	if Power(2, 10) != 1024 || Sqrt(16) != 4 || Exp(0) != 1 || Ln(1) != 0 || Log10(1000) != 3 {
		t.Error("POWER/SQRT/EXP/LN/LOG10 on ordinary values")
	}
	if !math.IsNaN(Sqrt(-1)) || !math.IsNaN(Ln(-1)) || !math.IsInf(Ln(0), -1) || !math.IsInf(Log10(0), -1) {
		t.Error("SQRT/LN/LOG10 edge cases are not NaN/-Infinity")
	}
}

func TestDecimalText(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"0", "0"}, {"-0.5", "-0.5"}, {"+.5", "0.5"}, {"1.50", "1.50"}, {"1e3", "1000"},
		{"1.5e-3", "0.0015"}, {"-12.345E1", "-123.45"}, {"007", "7"},
	} {
		d, err := ParseDecimal(tc.in)
		if err != nil || d.String() != tc.out {
			t.Errorf("ParseDecimal(%q) = %s, %v; want %s", tc.in, d, err, tc.out)
		}
	}
	for _, s := range []string{"", ".", "-", "1.2.3", "abc", "1e", "1ex", "0x10", " 1"} {
		if _, err := ParseDecimal(s); !errors.Is(err, ErrDecimalSyntax) {
			t.Errorf("ParseDecimal(%q): err = %v", s, err)
		}
	}
	if dec("1.50").Cmp(dec("1.5")) != 0 || dec("1.49").Cmp(dec("1.5")) != -1 {
		t.Error("Cmp ignores scale")
	}
	if var0 := (Decimal{}); var0.String() != "0" || var0.Sign() != 0 {
		t.Error("the zero Decimal is not 0")
	}
}
