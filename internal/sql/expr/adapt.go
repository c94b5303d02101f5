package expr

import (
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// The adapters call a strict function of package funcs on run-time
// values: they evaluate the arguments, answer NULL for a NULL argument
// without calling, convert each argument to the function's Go type and
// the result back. They are generic over the Go types, so the choice
// of conversions happens once, when the call is compiled, and an
// evaluation makes no reflective call. Every function is first brought
// to the form returning (result, ok, error) by the lift helpers; ok
// false is NULL.

func call1[A, R any](f func(A) (R, bool, error), evs []Eval, ts []types.Type, rt types.Type) Eval {
	ga, put := getter[A](ts[0]), putter[R](rt)
	if ga == nil || put == nil {
		return nil
	}
	a := evs[0]
	return func(vals []row.Value) (row.Value, error) {
		x, err := a(vals)
		if err != nil || x.IsNull() {
			return row.Null(), err
		}
		return result(put)(f(ga(x)))
	}
}

func call2[A, B, R any](f func(A, B) (R, bool, error), evs []Eval, ts []types.Type, rt types.Type) Eval {
	ga, gb, put := getter[A](ts[0]), getter[B](ts[1]), putter[R](rt)
	if ga == nil || gb == nil || put == nil {
		return nil
	}
	a, b := evs[0], evs[1]
	return func(vals []row.Value) (row.Value, error) {
		x, err := a(vals)
		if err != nil || x.IsNull() {
			return row.Null(), err
		}
		y, err := b(vals)
		if err != nil || y.IsNull() {
			return row.Null(), err
		}
		return result(put)(f(ga(x), gb(y)))
	}
}

func call3[A, B, C, R any](f func(A, B, C) (R, bool, error), evs []Eval, ts []types.Type, rt types.Type) Eval {
	ga, gb, gc, put := getter[A](ts[0]), getter[B](ts[1]), getter[C](ts[2]), putter[R](rt)
	if ga == nil || gb == nil || gc == nil || put == nil {
		return nil
	}
	a, b, c := evs[0], evs[1], evs[2]
	return func(vals []row.Value) (row.Value, error) {
		x, err := a(vals)
		if err != nil || x.IsNull() {
			return row.Null(), err
		}
		y, err := b(vals)
		if err != nil || y.IsNull() {
			return row.Null(), err
		}
		z, err := c(vals)
		if err != nil || z.IsNull() {
			return row.Null(), err
		}
		return result(put)(f(ga(x), gb(y), gc(z)))
	}
}

// result turns a lifted function's answer into a value.
func result[R any](put func(R) (row.Value, bool)) func(R, bool, error) (row.Value, error) {
	return func(r R, ok bool, err error) (row.Value, error) {
		if err != nil || !ok {
			return row.Null(), err
		}
		v, ok := put(r)
		if !ok {
			return row.Null(), nil
		}
		return v, nil
	}
}

// Lifts of the result forms of package funcs: a plain value, a value
// with ok (false is NULL), a value with an error.

func lift1[A, R any](f func(A) R) func(A) (R, bool, error) {
	return func(a A) (R, bool, error) { return f(a), true, nil }
}

func lift2[A, B, R any](f func(A, B) R) func(A, B) (R, bool, error) {
	return func(a A, b B) (R, bool, error) { return f(a, b), true, nil }
}

func lift2ok[A, B, R any](f func(A, B) (R, bool)) func(A, B) (R, bool, error) {
	return func(a A, b B) (R, bool, error) { r, ok := f(a, b); return r, ok, nil }
}

func lift2err[A, B, R any](f func(A, B) (R, error)) func(A, B) (R, bool, error) {
	return func(a A, b B) (R, bool, error) { r, err := f(a, b); return r, true, err }
}

func lift3[A, B, C, R any](f func(A, B, C) R) func(A, B, C) (R, bool, error) {
	return func(a A, b B, c C) (R, bool, error) { return f(a, b, c), true, nil }
}

func lift3ok[A, B, C, R any](f func(A, B, C) (R, bool)) func(A, B, C) (R, bool, error) {
	return func(a A, b B, c C) (R, bool, error) { r, ok := f(a, b, c); return r, ok, nil }
}

func lift3err[A, B, C, R any](f func(A, B, C) (R, error)) func(A, B, C) (R, bool, error) {
	return func(a A, b B, c C) (R, bool, error) { r, err := f(a, b, c); return r, true, err }
}

// evalAll evaluates every argument into a fresh slice, for the
// variadic and non-strict functions.
func evalAll(evs []Eval, vals []row.Value) ([]row.Value, error) {
	out := make([]row.Value, len(evs))
	for i, ev := range evs {
		v, err := ev(vals)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// ptrs returns pointers to vs, nil for NULL, as the non-strict
// functions of package funcs take them.
func ptrs[T any](vs []row.Value, get func(row.Value) T) []*T {
	out := make([]*T, len(vs))
	for i, v := range vs {
		if !v.IsNull() {
			x := get(v)
			out[i] = &x
		}
	}
	return out
}
