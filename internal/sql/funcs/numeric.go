package funcs

import (
	"errors"
	"math"
	"math/big"
)

// Integer is a SQL exact integer type: INT (int32) or BIGINT (int64).
type Integer interface{ ~int32 | ~int64 }

// ErrDivisionByZero reports integer division or MOD by zero, which
// fails the query in Flink (Java's ArithmeticException).
var ErrDivisionByZero = errors.New("division by zero")

// Div is integer division (INT / INT, BIGINT / BIGINT): truncated
// toward zero, as in Java. The minimum value divided by -1 wraps to
// itself, as in Java. Division by zero is an error.
func Div[T Integer](a, b T) (T, error) {
	if b == 0 {
		return 0, ErrDivisionByZero
	}
	return a / b, nil
}

// Mod is MOD(a, b) on integers with Java's % semantics: the result has
// the sign of the dividend (MOD(-7, 3) = -1, MOD(7, -3) = 1). MOD by
// zero is an error.
func Mod[T Integer](a, b T) (T, error) {
	if b == 0 {
		return 0, ErrDivisionByZero
	}
	return a % b, nil
}

// ModFloat64 is MOD on DOUBLE: Java's % (IEEE fmod, sign of the
// dividend); MOD(x, 0) is NaN.
func ModFloat64(a, b float64) float64 { return math.Mod(a, b) }

// Abs is ABS on integers. As Java's Math.abs, the minimum value is its
// own absolute value (ABS of -2^63 wraps to -2^63).
func Abs[T Integer](a T) T {
	if a < 0 {
		return -a
	}
	return a
}

// AbsFloat64 is ABS on DOUBLE.
func AbsFloat64(a float64) float64 { return math.Abs(a) }

// AbsDecimal is ABS on DECIMAL.
func AbsDecimal(a Decimal) Decimal {
	if a.Sign() < 0 {
		return Decimal{unscaled: new(big.Int).Neg(a.int()), scale: a.scale}
	}
	return a
}

// Sign is SIGN on integers: -1, 0 or 1, of the argument's type.
func Sign[T Integer](a T) T {
	switch {
	case a < 0:
		return -1
	case a > 0:
		return 1
	}
	return 0
}

// SignFloat64 is SIGN on DOUBLE: -1.0, 0.0 or 1.0 (Java's Math.signum:
// NaN stays NaN and -0.0 stays -0.0).
func SignFloat64(a float64) float64 {
	switch {
	case a < 0:
		return -1
	case a > 0:
		return 1
	}
	return a
}

// SignDecimal is SIGN on DECIMAL: -1, 0 or 1 with the argument's scale.
func SignDecimal(a Decimal) Decimal {
	return NewDecimal(int64(a.Sign()), 0).setScale(a.scale)
}

// Round is ROUND(x, d) on integers: x rounded HALF_UP (ties away from
// zero) to d digits after the point; a negative d rounds to tens,
// hundreds… (ROUND(125, -1) = 130). A positive d leaves x unchanged.
// The result wraps to the type like Java's intValue/longValue.
func Round[T Integer](x T, d int32) T {
	r := DecimalFromInt64(int64(x)).setScale(d).setScale(0)
	return T(r.int64())
}

// RoundFloat64 is ROUND(x, d) on DOUBLE with Flink's rounding: x is
// first turned into the decimal written by its shortest text (Java's
// BigDecimal.valueOf), rounded HALF_UP there, and turned back into a
// double. So ROUND(2.675, 2) is 2.68, where rounding the binary value
// would give 2.67. NaN and infinities are returned unchanged.
func RoundFloat64(x float64, d int32) float64 {
	dec, ok := DecimalFromFloat64(x)
	if !ok {
		return x
	}
	return dec.setScale(d).Float64()
}

// RoundDecimal is ROUND(x, d) on DECIMAL: HALF_UP to d digits after the
// point. The result has scale max(d, 0): ROUND(1.25, 1) = 1.3 and
// ROUND(125.0, -1) = 130.
func RoundDecimal(x Decimal, d int32) Decimal {
	r := x.setScale(d)
	if d < 0 {
		r = r.setScale(0)
	}
	return r
}

// FloorDecimal is FLOOR on DECIMAL: the largest integer not above x,
// with scale 0. (FLOOR on DOUBLE is math.Floor; on integers, identity.)
func FloorDecimal(x Decimal) Decimal { return x.setScaleMode(0, floor) }

// CeilDecimal is CEIL (CEILING) on DECIMAL: the smallest integer not
// below x, with scale 0. (CEIL on DOUBLE is math.Ceil.)
func CeilDecimal(x Decimal) Decimal { return x.setScaleMode(0, ceiling) }

// FloorFloat64 is FLOOR on DOUBLE.
func FloorFloat64(x float64) float64 { return math.Floor(x) }

// CeilFloat64 is CEIL on DOUBLE.
func CeilFloat64(x float64) float64 { return math.Ceil(x) }

// Power is POWER(x, y) on DOUBLE, Java's Math.pow (arguments of other
// numeric types are cast to DOUBLE first).
func Power(x, y float64) float64 { return math.Pow(x, y) }

// Sqrt is SQRT; SQRT of a negative number is NaN, not an error.
func Sqrt(x float64) float64 { return math.Sqrt(x) }

// Ln is LN, the natural logarithm; LN(0) is -Infinity and LN of a
// negative number NaN, as Java's Math.log.
func Ln(x float64) float64 { return math.Log(x) }

// Log10 is LOG10, with LN's edge cases.
func Log10(x float64) float64 { return math.Log10(x) }

// Exp is EXP, e raised to x.
func Exp(x float64) float64 { return math.Exp(x) }
