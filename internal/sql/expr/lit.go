package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/weir-stream/weir/internal/sql/funcs"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// NumberLit returns the literal a number is written as, typed as
// Flink types it: an integer is INT if it fits 32 bits, else BIGINT; a
// number with a point is DECIMAL(p, s) with the digits as written
// (0.908 is DECIMAL(3, 3)); a number with an exponent is DOUBLE. A
// decimal needing more than 18 digits is refused (values are int64).
func NumberLit(text string) (*Lit, error) {
	switch {
	case strings.ContainsAny(text, "eE"):
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("invalid number %s", text)
		}
		return &Lit{V: row.Double(f), T: types.Type{Kind: types.Double, NotNull: true}}, nil
	case strings.Contains(text, "."):
		whole, frac, _ := strings.Cut(text, ".")
		digits := strings.TrimLeft(whole+frac, "0")
		u, err := strconv.ParseInt("0"+whole+frac, 10, 64)
		if err != nil || len(digits) > 18 || strings.Trim(whole+frac, "0123456789") != "" {
			return nil, fmt.Errorf("invalid or too long decimal number %s", text)
		}
		s := int32(len(frac))
		p := max(int32(len(digits)), s, 1)
		return &Lit{V: row.Decimal(u), T: types.Type{Kind: types.Decimal, Precision: p, Scale: s, NotNull: true}}, nil
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("integer %s out of range", text)
	}
	if v >= math.MinInt32 && v <= math.MaxInt32 {
		return &Lit{V: row.Int(int32(v)), T: types.Type{Kind: types.Int, NotNull: true}}, nil
	}
	return &Lit{V: row.BigInt(v), T: types.Type{Kind: types.BigInt, NotNull: true}}, nil
}

// StringLit returns the VARCHAR literal s.
func StringLit(s string) *Lit {
	return &Lit{V: row.String(s), T: types.Type{Kind: types.Varchar, NotNull: true}}
}

// BoolLit returns TRUE or FALSE.
func BoolLit(b bool) *Lit { return &Lit{V: row.Bool(b), T: boolNotNull} }

// NullLit returns the untyped NULL, which takes the type of its
// context when an operator or function is bound.
func NullLit() *Lit { return &Lit{T: types.NullType} }

// IntervalLit returns an INTERVAL of ms milliseconds.
func IntervalLit(ms int64) *Lit {
	return &Lit{V: row.Interval(ms), T: types.Type{Kind: types.Interval, NotNull: true}}
}

// TimestampLit returns TIMESTAMP 'text', read as CAST reads a
// timestamp (funcs.ParseTimestamp).
func TimestampLit(text string) (*Lit, error) {
	ts, err := funcs.ParseTimestamp(text)
	if err != nil {
		return nil, fmt.Errorf("invalid TIMESTAMP literal %q", text)
	}
	return &Lit{V: row.Timestamp(ts.UnixMilli()), T: types.Type{Kind: types.Timestamp, Precision: 3, NotNull: true}}, nil
}
