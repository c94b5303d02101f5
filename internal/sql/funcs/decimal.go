package funcs

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// MaxDecimalPrecision is the largest precision of DECIMAL(p, s), as in
// Flink.
const MaxDecimalPrecision = 38

// Decimal is an exact decimal number, the value of DECIMAL(p, s): an
// arbitrary-precision unscaled integer and a scale, worth
// unscaled × 10^-scale, like Java's BigDecimal. A Decimal is immutable;
// the zero value is 0 with scale 0. The precision and scale of the SQL
// type are not part of the value: Rescale fits a value to a type.
//
// A scaled big.Int rather than big.Rat, because SQL decimals have a
// scale that shows in their text (CAST(1.50 AS VARCHAR) is '1.50') and
// HALF_UP rounding to a scale is the common operation.
type Decimal struct {
	unscaled *big.Int // nil means 0
	scale    int32
}

// NewDecimal returns unscaled × 10^-scale.
func NewDecimal(unscaled int64, scale int32) Decimal {
	return Decimal{unscaled: big.NewInt(unscaled), scale: scale}
}

// ErrDecimalSyntax reports text that is not a decimal number.
var ErrDecimalSyntax = errors.New("not a decimal number")

// ParseDecimal parses plain or scientific decimal notation ("-12.50",
// "1e3", "+.5"), the text Java's BigDecimal accepts. The scale is the
// number of digits after the point minus the exponent.
func ParseDecimal(s string) (Decimal, error) {
	mant, exp := s, int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.ParseInt(s[i+1:], 10, 32)
		if err != nil {
			return Decimal{}, fmt.Errorf("%q: %w", s, ErrDecimalSyntax)
		}
		mant, exp = s[:i], e
	}
	neg := false
	if mant != "" && (mant[0] == '+' || mant[0] == '-') {
		neg = mant[0] == '-'
		mant = mant[1:]
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return Decimal{}, fmt.Errorf("%q: %w", s, ErrDecimalSyntax)
	}
	u, _ := new(big.Int).SetString(digits, 10)
	if neg {
		u.Neg(u)
	}
	scale := int64(len(frac)) - exp
	if scale > 1<<30 || scale < -(1<<30) {
		return Decimal{}, fmt.Errorf("%q: exponent out of range: %w", s, ErrDecimalSyntax)
	}
	return Decimal{unscaled: u, scale: int32(scale)}, nil
}

// DecimalFromInt64 returns v with scale 0.
func DecimalFromInt64(v int64) Decimal { return NewDecimal(v, 0) }

// DecimalFromFloat64 returns the decimal written by the shortest text
// that reads back as v, as Java's BigDecimal.valueOf(double) does (so
// 0.1 is 0.1, not 0.1000000000000000055…). NaN and infinities have no
// decimal: ok is false.
func DecimalFromFloat64(v float64) (d Decimal, ok bool) {
	d, err := ParseDecimal(strconv.FormatFloat(v, 'g', -1, 64))
	return d, err == nil
}

func (d Decimal) int() *big.Int {
	if d.unscaled == nil {
		return new(big.Int)
	}
	return d.unscaled
}

// Scale returns the number of digits after the decimal point (negative
// for a multiple of a power of ten written with an exponent).
func (d Decimal) Scale() int32 { return d.scale }

// Precision returns the number of digits of the unscaled value (1 for 0).
func (d Decimal) Precision() int {
	s := d.int().String()
	s = strings.TrimPrefix(s, "-")
	return len(s)
}

// Sign returns -1, 0 or 1.
func (d Decimal) Sign() int { return d.int().Sign() }

// Cmp compares the values of d and e regardless of scale: -1, 0 or 1.
func (d Decimal) Cmp(e Decimal) int {
	s := max(d.scale, e.scale)
	return d.setScale(s).int().Cmp(e.setScale(s).int())
}

// String formats d in plain notation with exactly Scale digits after
// the point, as BigDecimal.toPlainString and Flink's CAST to VARCHAR do.
func (d Decimal) String() string {
	if d.scale <= 0 {
		return d.setScale(0).int().String()
	}
	digits := d.int().String()
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	if pad := int(d.scale) + 1 - len(digits); pad > 0 {
		digits = strings.Repeat("0", pad) + digits
	}
	cut := len(digits) - int(d.scale)
	s := digits[:cut] + "." + digits[cut:]
	if neg {
		s = "-" + s
	}
	return s
}

// Float64 returns the double nearest to d.
func (d Decimal) Float64() float64 {
	f, _ := strconv.ParseFloat(d.int().String()+"e"+strconv.Itoa(-int(d.scale)), 64)
	return f
}

var ten = big.NewInt(10)

func pow10(n int32) *big.Int { return new(big.Int).Exp(ten, big.NewInt(int64(n)), nil) }

// setScale returns d with the given scale, rounding HALF_UP (ties away
// from zero, as Java's RoundingMode.HALF_UP) when digits are dropped.
func (d Decimal) setScale(scale int32) Decimal {
	return d.setScaleMode(scale, halfUp)
}

type roundMode int

const (
	halfUp  roundMode = iota
	down              // toward zero
	floor             // toward negative infinity
	ceiling           // toward positive infinity
)

func (d Decimal) setScaleMode(scale int32, mode roundMode) Decimal {
	u := d.int()
	if scale >= d.scale {
		return Decimal{unscaled: new(big.Int).Mul(u, pow10(scale-d.scale)), scale: scale}
	}
	div := pow10(d.scale - scale)
	q, r := new(big.Int).QuoRem(u, div, new(big.Int))
	if r.Sign() != 0 {
		switch mode {
		case halfUp:
			twice := new(big.Int).Abs(r)
			twice.Lsh(twice, 1)
			if twice.Cmp(div) >= 0 {
				q.Add(q, big.NewInt(int64(u.Sign())))
			}
		case floor:
			if u.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			}
		case ceiling:
			if u.Sign() > 0 {
				q.Add(q, big.NewInt(1))
			}
		}
	}
	return Decimal{unscaled: q, scale: scale}
}

// Rescale fits d to DECIMAL(precision, scale): it rounds HALF_UP to
// scale digits after the point and reports ok false when the result
// needs more than precision digits, where Flink's CAST answers NULL.
func (d Decimal) Rescale(precision, scale int32) (r Decimal, ok bool) {
	r = d.setScale(scale)
	if r.Sign() != 0 && r.Precision() > int(precision) {
		return Decimal{}, false
	}
	return r, true
}

// int64 returns the integer part of d (truncated toward zero) wrapped
// to 64 bits, as BigDecimal.longValue does.
func (d Decimal) int64() int64 {
	q := d.setScaleMode(0, down).int()
	if q.IsInt64() {
		return q.Int64()
	}
	m := new(big.Int).And(q, new(big.Int).SetUint64(^uint64(0)))
	return int64(m.Uint64())
}
