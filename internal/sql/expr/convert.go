package expr

import (
	"time"

	"github.com/weir-stream/weir/internal/sql/funcs"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// Conversions between run-time values and the Go types of package
// funcs, chosen once per argument when a call is compiled. Only a
// function that takes a TIMESTAMP gets a time.Time (UTC, from epoch
// milliseconds) and only one that takes a DECIMAL a funcs.Decimal;
// strings are passed as they are, without copying.

// getter returns the reader of a value of SQL type t as a T, or nil
// when T is not t's Go type.
func getter[T any](t types.Type) func(row.Value) T {
	var f any
	var zero T
	switch any(zero).(type) {
	case string:
		f = func(v row.Value) string { return v.S }
	case int32:
		f = func(v row.Value) int32 { return int32(v.I) }
	case int64:
		f = func(v row.Value) int64 { return v.I }
	case float64:
		f = func(v row.Value) float64 { return v.Float() }
	case bool:
		f = func(v row.Value) bool { return v.I != 0 }
	case time.Time:
		f = func(v row.Value) time.Time { return funcs.TimestampFromMillis(v.I) }
	case funcs.Decimal:
		s := t.Scale
		f = func(v row.Value) funcs.Decimal { return funcs.NewDecimal(v.I, s) }
	}
	g, _ := f.(func(row.Value) T)
	if g == nil || !goTypeOf[T](t) {
		return nil
	}
	return g
}

// goTypeOf reports whether T is the Go type values of t are passed as.
func goTypeOf[T any](t types.Type) bool {
	var zero T
	switch any(zero).(type) {
	case string:
		return t.Kind == types.Varchar
	case int32:
		return t.Kind == types.Int
	case int64:
		return t.Kind == types.BigInt
	case float64:
		return t.Kind == types.Double
	case bool:
		return t.Kind == types.Boolean
	case time.Time:
		return t.Kind == types.Timestamp
	case funcs.Decimal:
		return t.Kind == types.Decimal
	}
	return false
}

// putter returns the writer of a T as a value of SQL type t (ok false
// meaning NULL, for a DECIMAL beyond t's precision), or nil when T is
// not t's Go type.
func putter[T any](t types.Type) func(T) (row.Value, bool) {
	if !goTypeOf[T](t) {
		return nil
	}
	var f any
	var zero T
	switch any(zero).(type) {
	case string:
		f = func(x string) (row.Value, bool) { return row.String(x), true }
	case int32:
		f = func(x int32) (row.Value, bool) { return row.Int(x), true }
	case int64:
		f = func(x int64) (row.Value, bool) { return row.BigInt(x), true }
	case float64:
		f = func(x float64) (row.Value, bool) { return row.Double(x), true }
	case bool:
		f = func(x bool) (row.Value, bool) { return row.Bool(x), true }
	case time.Time:
		f = func(x time.Time) (row.Value, bool) { return row.Timestamp(x.UnixMilli()), true }
	case funcs.Decimal:
		p, s := t.Precision, t.Scale
		f = func(x funcs.Decimal) (row.Value, bool) {
			u, ok := unscaled(x, p, s)
			return row.Decimal(u), ok
		}
	}
	return f.(func(T) (row.Value, bool))
}
