package funcs

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// CAST follows Flink's rules (since 1.15, without the legacy cast
// behaviour): text that does not read as the target type fails the
// query (CAST('abc' AS INT) is an error), while TRY_CAST answers NULL
// instead; a DECIMAL that does not fit its precision is NULL for both.
// Numeric narrowing is Java's: BIGINT to INT wraps, DOUBLE to BIGINT or
// INT truncates toward zero and saturates (NaN becomes 0). Strings are
// trimmed of surrounding whitespace before they are read.
//
// TIMESTAMP to and from BIGINT is not a CAST in Flink (it needs
// TO_TIMESTAMP_LTZ or UNIX_TIMESTAMP) and is not here.

// ErrCast reports a value CAST cannot convert.
var ErrCast = errors.New("cannot cast")

// Try is TRY_CAST given a CAST: the value, or NULL (ok false) where
// CAST fails.
func Try[T any](v T, err error) (T, bool) {
	if err != nil {
		var zero T
		return zero, false
	}
	return v, true
}

func castError(s, to string) error { return fmt.Errorf("%q as %s: %w", s, to, ErrCast) }

// StringToInt64 is CAST(s AS BIGINT). An optional sign and digits are
// read; a fractional part of digits after a point is dropped
// ('1.9' is 1), and digits may be missing on either side of the point
// ('.5' and '-.' are 0), as Flink's string-to-integer parse (Hive's)
// does. Anything else, or a value outside BIGINT, fails.
func StringToInt64(s string) (int64, error) {
	t := strings.TrimSpace(s)
	whole, frac, point := strings.Cut(t, ".")
	if strings.Trim(frac, "0123456789") != "" {
		return 0, castError(s, "BIGINT")
	}
	if point && (whole == "" || whole == "+" || whole == "-") {
		return 0, nil
	}
	v, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, castError(s, "BIGINT")
	}
	return v, nil
}

// StringToInt32 is CAST(s AS INT), read as StringToInt64 reads BIGINT;
// a value outside INT fails.
func StringToInt32(s string) (int32, error) {
	v, err := StringToInt64(s)
	if err != nil || v < math.MinInt32 || v > math.MaxInt32 {
		return 0, castError(s, "INT")
	}
	return int32(v), nil
}

// StringToFloat64 is CAST(s AS DOUBLE): decimal or scientific notation
// as Java's Double.parseDouble reads it, plus 'NaN', 'Infinity' and
// '-Infinity' spelled as Java spells them.
func StringToFloat64(s string) (float64, error) {
	t := strings.TrimSpace(s)
	switch t {
	case "NaN":
		return math.NaN(), nil
	case "Infinity", "+Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	if strings.ContainsAny(t, "xXpP_iInN") { // hex floats, Go's inf/nan spellings
		return 0, castError(s, "DOUBLE")
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, castError(s, "DOUBLE")
	}
	return v, nil
}

// StringToDecimal is CAST(s AS DECIMAL(precision, scale)): s read as a
// decimal number and rounded HALF_UP to scale. Text that is not a
// number fails; a number that does not fit gives NULL (ok false).
func StringToDecimal(s string, precision, scale int32) (d Decimal, ok bool, err error) {
	v, err := ParseDecimal(strings.TrimSpace(s))
	if err != nil {
		return Decimal{}, false, castError(s, fmt.Sprintf("DECIMAL(%d, %d)", precision, scale))
	}
	d, ok = v.Rescale(precision, scale)
	return d, ok, nil
}

// StringToBool is CAST(s AS BOOLEAN): 'true', 't', 'yes', 'y', '1' are
// TRUE and 'false', 'f', 'no', 'n', '0' FALSE, ignoring case; other text
// fails.
func StringToBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "t", "yes", "y", "1":
		return true, nil
	case "false", "f", "no", "n", "0":
		return false, nil
	}
	return false, castError(s, "BOOLEAN")
}

// StringToTimestamp is CAST(s AS TIMESTAMP(3)); see ParseTimestamp.
func StringToTimestamp(s string) (time.Time, error) { return ParseTimestamp(s) }

// Int64ToInt32 is CAST(BIGINT AS INT): Java's narrowing, which keeps
// the low 32 bits.
func Int64ToInt32(v int64) int32 { return int32(v) }

// Float64ToInt64 is CAST(DOUBLE AS BIGINT): truncated toward zero,
// saturating at the limits, NaN becoming 0 (Java's (long) cast).
func Float64ToInt64(v float64) int64 { return saturating[int64](v, math.MinInt64, math.MaxInt64) }

// Float64ToInt32 is CAST(DOUBLE AS INT): Java's (int) cast, truncating
// and saturating at INT's limits.
func Float64ToInt32(v float64) int32 { return saturating[int32](v, math.MinInt32, math.MaxInt32) }

// saturating truncates v toward zero into [lo, hi], NaN becoming 0.
func saturating[T int32 | int64](v float64, lo, hi T) T {
	switch {
	case math.IsNaN(v):
		return 0
	case v >= float64(hi):
		return hi
	case v <= float64(lo):
		return lo
	}
	return T(v)
}

// Float64ToDecimal is CAST(DOUBLE AS DECIMAL(precision, scale)): the
// double's shortest decimal text rounded HALF_UP to scale; NULL (ok
// false) when it does not fit or is NaN or infinite.
func Float64ToDecimal(v float64, precision, scale int32) (Decimal, bool) {
	d, ok := DecimalFromFloat64(v)
	if !ok {
		return Decimal{}, false
	}
	return d.Rescale(precision, scale)
}

// Int64ToDecimal is CAST(BIGINT or INT AS DECIMAL(precision, scale));
// NULL (ok false) when it does not fit.
func Int64ToDecimal(v int64, precision, scale int32) (Decimal, bool) {
	return DecimalFromInt64(v).Rescale(precision, scale)
}

// DecimalToInt64 is CAST(DECIMAL AS BIGINT): the fraction dropped
// (toward zero) and the result wrapped to 64 bits, as Java's
// BigDecimal.longValue.
func DecimalToInt64(d Decimal) int64 { return d.int64() }

// DecimalToInt32 is CAST(DECIMAL AS INT): as DecimalToInt64, wrapped to
// 32 bits.
func DecimalToInt32(d Decimal) int32 { return int32(d.int64()) }

// DecimalToFloat64 is CAST(DECIMAL AS DOUBLE): the nearest double.
func DecimalToFloat64(d Decimal) float64 { return d.Float64() }

// BoolToInt64 is CAST(BOOLEAN AS BIGINT or INT): 1 or 0.
func BoolToInt64(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Int64ToBool is CAST(BIGINT or INT AS BOOLEAN): TRUE unless 0.
func Int64ToBool(v int64) bool { return v != 0 }

// Int64ToString is CAST(BIGINT or INT AS VARCHAR).
func Int64ToString(v int64) string { return strconv.FormatInt(v, 10) }

// BoolToString is CAST(BOOLEAN AS VARCHAR): 'TRUE' or 'FALSE'.
func BoolToString(b bool) string {
	if b {
		return "TRUE"
	}
	return "FALSE"
}

// DecimalToString is CAST(DECIMAL AS VARCHAR): plain notation with the
// value's scale ('1.50').
func DecimalToString(d Decimal) string { return d.String() }

// TimestampToString is CAST(TIMESTAMP(3) AS VARCHAR); see
// FormatTimestamp.
func TimestampToString(ts time.Time) string { return FormatTimestamp(ts) }

// Float64ToString is CAST(DOUBLE AS VARCHAR) in Java's Double.toString
// form: the shortest digits that read back as v, plain with at least
// one digit after the point for magnitudes in [0.001, 10^7) ('1.0',
// '0.5'), computerized scientific notation otherwise ('1.0E7',
// '1.0E-4'), and 'NaN', 'Infinity', '-Infinity'.
func Float64ToString(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	case v == 0:
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(v); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(v, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
