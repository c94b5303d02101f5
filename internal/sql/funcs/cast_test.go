package funcs

import (
	"errors"
	"math"
	"testing"
)

func TestCastStringToIntegers(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int64
	}{
		{"42", 42}, {" -42 ", -42}, {"+7", 7}, {"1.9", 1}, {"-1.9", -1}, {"3.", 3}, {".5", 0}, {"-.", 0},
		{"9223372036854775807", math.MaxInt64},
	} {
		got, err := StringToInt64(tc.s)
		if err != nil || got != tc.want {
			t.Errorf("CAST(%q AS BIGINT) = %d, %v; want %d", tc.s, got, err, tc.want)
		}
	}
	for _, s := range []string{"abc", "", " ", "1a", "1.x", "9223372036854775808", "1_000", "-", "+", "0x10", "1.5.0"} {
		if _, err := StringToInt64(s); !errors.Is(err, ErrCast) {
			t.Errorf("CAST(%q AS BIGINT): err = %v, want ErrCast", s, err)
		}
	}
	if _, err := StringToInt32("abc"); !errors.Is(err, ErrCast) {
		t.Errorf("CAST('abc' AS INT): err = %v, want ErrCast", err)
	}
	if _, err := StringToInt32("2147483648"); !errors.Is(err, ErrCast) {
		t.Errorf("CAST('2147483648' AS INT): err = %v, want ErrCast", err)
	}
	if got, err := StringToInt32("-2147483648"); err != nil || got != math.MinInt32 {
		t.Errorf("CAST('-2147483648' AS INT) = %d, %v", got, err)
	}
}

func TestTryCastTurnsFailureIntoNull(t *testing.T) {
	if _, ok := Try(StringToInt32("abc")); ok {
		t.Error("TRY_CAST('abc' AS INT) is not NULL")
	}
	if v, ok := Try(StringToInt32("12")); !ok || v != 12 {
		t.Errorf("TRY_CAST('12' AS INT) = %d, %v", v, ok)
	}
}

func TestCastStringToDouble(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want float64
	}{{"1.5", 1.5}, {" -2e3 ", -2000}, {".5", 0.5}, {"Infinity", math.Inf(1)}, {"-Infinity", math.Inf(-1)}, {"1e999", math.Inf(1)}} {
		got, err := StringToFloat64(tc.s)
		if err != nil || got != tc.want {
			t.Errorf("CAST(%q AS DOUBLE) = %v, %v; want %v", tc.s, got, err, tc.want)
		}
	}
	if got, err := StringToFloat64("NaN"); err != nil || !math.IsNaN(got) {
		t.Errorf("CAST('NaN' AS DOUBLE) = %v, %v", got, err)
	}
	for _, s := range []string{"abc", "", "inf", "nan", "0x1p3", "1,5"} {
		if _, err := StringToFloat64(s); !errors.Is(err, ErrCast) {
			t.Errorf("CAST(%q AS DOUBLE): err = %v, want ErrCast", s, err)
		}
	}
}

func TestCastToDecimalRoundsAndOverflowsToNull(t *testing.T) {
	for _, tc := range []struct {
		s          string
		p, sc      int32
		want       string
		ok, failed bool
	}{
		{"1.25", 3, 1, "1.3", true, false},
		{"-1.25", 3, 1, "-1.3", true, false},
		{"12", 4, 2, "12.00", true, false},
		{"123.45", 3, 1, "", false, false}, // does not fit: NULL
		{"0.001", 3, 2, "0.00", true, false},
		{"abc", 3, 1, "", false, true},
	} {
		got, ok, err := StringToDecimal(tc.s, tc.p, tc.sc)
		if (err != nil) != tc.failed || ok != tc.ok || ok && got.String() != tc.want {
			t.Errorf("CAST(%q AS DECIMAL(%d, %d)) = %s, %v, %v; want %s, %v, failed %v", tc.s, tc.p, tc.sc, got, ok, err, tc.want, tc.ok, tc.failed)
		}
	}
	if got, ok := Float64ToDecimal(0.1, 10, 3); !ok || got.String() != "0.100" {
		t.Errorf("CAST(0.1 AS DECIMAL(10, 3)) = %s, %v", got, ok)
	}
	if _, ok := Float64ToDecimal(math.NaN(), 10, 3); ok {
		t.Error("CAST(NaN AS DECIMAL) is not NULL")
	}
	if _, ok := Int64ToDecimal(1000, 3, 0); ok {
		t.Error("CAST(1000 AS DECIMAL(3, 0)) is not NULL")
	}
	if got, ok := Int64ToDecimal(-42, 5, 1); !ok || got.String() != "-42.0" {
		t.Errorf("CAST(-42 AS DECIMAL(5, 1)) = %s, %v", got, ok)
	}
}

func TestCastBetweenNumbers(t *testing.T) {
	if Int64ToInt32(1<<32+5) != 5 || Int64ToInt32(-1) != -1 {
		t.Error("BIGINT to INT does not wrap")
	}
	for _, tc := range []struct {
		v    float64
		want int64
	}{{1.9, 1}, {-1.9, -1}, {math.NaN(), 0}, {1e300, math.MaxInt64}, {-1e300, math.MinInt64}} {
		if got := Float64ToInt64(tc.v); got != tc.want {
			t.Errorf("CAST(%v AS BIGINT) = %d, want %d", tc.v, got, tc.want)
		}
	}
	if Float64ToInt32(3e9) != math.MaxInt32 || Float64ToInt32(-3e9) != math.MinInt32 || Float64ToInt32(-2.5) != -2 {
		t.Error("DOUBLE to INT does not truncate and saturate")
	}
	if DecimalToInt64(dec("-7.9")) != -7 || DecimalToInt32(dec("12.5")) != 12 {
		t.Error("DECIMAL to integers does not truncate")
	}
	if DecimalToInt64(dec("18446744073709551617")) != 1 {
		t.Error("DECIMAL to BIGINT does not wrap like BigDecimal.longValue")
	}
	if DecimalToFloat64(dec("0.1")) != 0.1 {
		t.Error("DECIMAL to DOUBLE")
	}
}

func TestCastBooleans(t *testing.T) {
	for _, s := range []string{"true", "TRUE", " t ", "yes", "Y", "1"} {
		if v, err := StringToBool(s); err != nil || !v {
			t.Errorf("CAST(%q AS BOOLEAN) = %v, %v", s, v, err)
		}
	}
	for _, s := range []string{"false", "F", "no", "n", "0"} {
		if v, err := StringToBool(s); err != nil || v {
			t.Errorf("CAST(%q AS BOOLEAN) = %v, %v", s, v, err)
		}
	}
	for _, s := range []string{"", "2", "maybe", "tru"} {
		if _, err := StringToBool(s); !errors.Is(err, ErrCast) {
			t.Errorf("CAST(%q AS BOOLEAN): err = %v", s, err)
		}
	}
	if BoolToInt64(true) != 1 || BoolToInt64(false) != 0 || !Int64ToBool(-3) || Int64ToBool(0) {
		t.Error("BOOLEAN and integers")
	}
	if BoolToString(true) != "TRUE" || BoolToString(false) != "FALSE" {
		t.Error("BOOLEAN to VARCHAR")
	}
}

func TestCastToString(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{1, "1.0"}, {0.5, "0.5"}, {math.Copysign(0, -1), "-0.0"}, {0, "0.0"}, {123456.789, "123456.789"},
		{1e7, "1.0E7"}, {1.5e-4, "1.5E-4"}, {0.001, "0.001"}, {-2.5e10, "-2.5E10"},
		{math.NaN(), "NaN"}, {math.Inf(-1), "-Infinity"},
	} {
		if got := Float64ToString(tc.v); got != tc.want {
			t.Errorf("CAST(%v AS VARCHAR) = %q, want %q", tc.v, got, tc.want)
		}
	}
	if Int64ToString(-12) != "-12" || DecimalToString(dec("1.50")) != "1.50" {
		t.Error("BIGINT/DECIMAL to VARCHAR")
	}
	if got := TimestampToString(ts("2024-03-05 07:08:09")); got != "2024-03-05 07:08:09.000" {
		t.Errorf("CAST(TIMESTAMP AS VARCHAR) = %q", got)
	}
	got, err := StringToTimestamp("2024-03-05 07:08:09.5")
	if err != nil || TimestampToString(got) != "2024-03-05 07:08:09.500" {
		t.Errorf("CAST(VARCHAR AS TIMESTAMP) = %v, %v", got, err)
	}
}
