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

// conv converts one non-NULL run-time value; ok false means NULL.
type conv func(v row.Value) (r row.Value, ok bool, err error)

// castFunc returns the conversion CAST(from AS to) compiles to, with
// Flink's rules as package funcs states them (cast.go): unreadable text
// fails the query, numeric narrowing wraps or saturates as Java does, a
// DECIMAL that does not fit its precision is NULL. With try set a
// failure is NULL instead. Conversions Flink does not have are an
// error here, when the CAST is bound.
func castFunc(from, to types.Type, try bool) (func(row.Value) (row.Value, error), error) {
	c := castConv(from, to)
	if c == nil {
		return nil, fmt.Errorf("cannot cast %s to %s", from.Plain(), to.Plain().Nullable())
	}
	return func(v row.Value) (row.Value, error) {
		if v.IsNull() {
			return row.Null(), nil
		}
		r, ok, err := c(v)
		switch {
		case err != nil && try:
			return row.Null(), nil
		case err != nil:
			return row.Null(), err
		case !ok:
			return row.Null(), nil
		}
		return r, nil
	}, nil
}

func castConv(from, to types.Type) conv {
	f := from.Kind
	if f == types.Null {
		return func(row.Value) (row.Value, bool, error) { return row.Null(), false, nil }
	}
	integer := f == types.Int || f == types.BigInt || f == types.Boolean
	switch to.Kind {
	case types.Boolean:
		switch {
		case integer || f == types.Decimal:
			return func(v row.Value) (row.Value, bool, error) { return row.Bool(v.I != 0), true, nil }
		case f == types.Varchar:
			return func(v row.Value) (row.Value, bool, error) {
				b, err := funcs.StringToBool(v.S)
				return row.Bool(b), true, err
			}
		}
	case types.Int, types.BigInt:
		k := to.Kind
		wrap := func(i int64) row.Value {
			if k == types.Int {
				return row.Int(int32(i))
			}
			return row.BigInt(i)
		}
		switch {
		case integer:
			return func(v row.Value) (row.Value, bool, error) { return wrap(v.I), true, nil }
		case f == types.Double:
			if k == types.Int {
				return func(v row.Value) (row.Value, bool, error) { return row.Int(funcs.Float64ToInt32(v.Float())), true, nil }
			}
			return func(v row.Value) (row.Value, bool, error) {
				return row.BigInt(funcs.Float64ToInt64(v.Float())), true, nil
			}
		case f == types.Decimal:
			s := from.Scale
			return func(v row.Value) (row.Value, bool, error) { return wrap(truncDecimal(v.I, s)), true, nil }
		case f == types.Varchar && k == types.Int:
			return func(v row.Value) (row.Value, bool, error) {
				i, err := funcs.StringToInt32(v.S)
				return row.Int(i), true, err
			}
		case f == types.Varchar:
			return func(v row.Value) (row.Value, bool, error) {
				i, err := funcs.StringToInt64(v.S)
				return row.BigInt(i), true, err
			}
		}
	case types.Double:
		switch {
		case integer:
			return func(v row.Value) (row.Value, bool, error) { return row.Double(float64(v.I)), true, nil }
		case f == types.Double:
			return func(v row.Value) (row.Value, bool, error) { return v, true, nil }
		case f == types.Decimal:
			s := from.Scale
			return func(v row.Value) (row.Value, bool, error) { return row.Double(decimalFloat(v.I, s)), true, nil }
		case f == types.Varchar:
			return func(v row.Value) (row.Value, bool, error) {
				x, err := funcs.StringToFloat64(v.S)
				return row.Double(x), true, err
			}
		}
	case types.Decimal:
		p, s := to.Precision, to.Scale
		switch {
		case integer || f == types.Decimal:
			fs := from.Scale
			return func(v row.Value) (row.Value, bool, error) {
				u, ok := rescale(v.I, fs, s)
				return row.Decimal(u), ok && fits(u, p), nil
			}
		case f == types.Double:
			return func(v row.Value) (row.Value, bool, error) {
				d, ok := funcs.Float64ToDecimal(v.Float(), p, s)
				if !ok {
					return row.Null(), false, nil
				}
				u, ok := unscaled(d, p, s)
				return row.Decimal(u), ok, nil
			}
		case f == types.Varchar:
			return func(v row.Value) (row.Value, bool, error) {
				d, ok, err := funcs.StringToDecimal(v.S, p, s)
				if err != nil || !ok {
					return row.Null(), false, err
				}
				u, ok := unscaled(d, p, s)
				return row.Decimal(u), ok, nil
			}
		}
	case types.Varchar:
		switch f {
		case types.Varchar:
			return func(v row.Value) (row.Value, bool, error) { return v, true, nil }
		case types.Int, types.BigInt:
			return func(v row.Value) (row.Value, bool, error) { return row.String(funcs.Int64ToString(v.I)), true, nil }
		case types.Boolean:
			return func(v row.Value) (row.Value, bool, error) { return row.String(funcs.BoolToString(v.Bool())), true, nil }
		case types.Double:
			return func(v row.Value) (row.Value, bool, error) {
				return row.String(funcs.Float64ToString(v.Float())), true, nil
			}
		case types.Decimal:
			s := from.Scale
			return func(v row.Value) (row.Value, bool, error) {
				return row.String(funcs.DecimalToString(funcs.NewDecimal(v.I, s))), true, nil
			}
		case types.Timestamp:
			return func(v row.Value) (row.Value, bool, error) {
				return row.String(funcs.TimestampToString(funcs.TimestampFromMillis(v.I))), true, nil
			}
		}
	case types.Timestamp:
		switch f {
		case types.Timestamp:
			return func(v row.Value) (row.Value, bool, error) { return v, true, nil }
		case types.Varchar:
			return func(v row.Value) (row.Value, bool, error) {
				t, err := funcs.StringToTimestamp(v.S)
				return row.Timestamp(t.UnixMilli()), true, err
			}
		}
	case types.Interval:
		if f == types.Interval {
			return func(v row.Value) (row.Value, bool, error) { return v, true, nil }
		}
	}
	return nil
}

// truncDecimal returns the integer part of unscaled v at scale s,
// truncated toward zero as BigDecimal.longValue.
func truncDecimal(v int64, s int32) int64 {
	if s > 18 {
		return 0
	}
	return v / int64(pow10[s])
}

// decimalFloat returns the double nearest to unscaled v at scale s:
// exact division when both are exact doubles, else through the text.
func decimalFloat(v int64, s int32) float64 {
	if s <= 22 && v > -(1<<53) && v < 1<<53 {
		return float64(v) / math.Pow10(int(s))
	}
	return funcs.DecimalToFloat64(funcs.NewDecimal(v, s))
}

// unscaled returns d fitted to DECIMAL(p, s) as an unscaled int64, or
// false when it does not fit.
func unscaled(d funcs.Decimal, p, s int32) (int64, bool) {
	r, ok := d.Rescale(p, s)
	if !ok {
		return 0, false
	}
	u, err := strconv.ParseInt(strings.Replace(r.String(), ".", "", 1), 10, 64)
	return u, err == nil
}
