package funcs

import "cmp"

// Coalesce is COALESCE(v1, v2, ...): the first non-NULL argument, nil
// when all are NULL.
func Coalesce[T any](vs ...*T) *T {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return nil
}

// NullIf is NULLIF(a, b): NULL when a equals b, a otherwise (a NULL a
// stays NULL; a NULL b never equals).
func NullIf[T comparable](a, b *T) *T {
	if a != nil && b != nil && *a == *b {
		return nil
	}
	return a
}

// If is IF(cond, then, else): then when cond is TRUE, else when it is
// FALSE or NULL.
func If[T any](cond *bool, then, els *T) *T {
	if cond != nil && *cond {
		return then
	}
	return els
}

// Greatest is GREATEST(v1, v2, ...): the largest argument, or NULL when
// any argument is NULL, as in Flink. Arguments are of one type (the
// planner casts them to their common type first). For DOUBLE, NaN is
// smaller than every number (cmp.Compare's order; Java's would make it
// the largest).
func Greatest[T cmp.Ordered](vs ...*T) *T { return extreme(vs, 1) }

// Least is LEAST(v1, v2, ...): the smallest argument, or NULL when any
// argument is NULL.
func Least[T cmp.Ordered](vs ...*T) *T { return extreme(vs, -1) }

func extreme[T cmp.Ordered](vs []*T, want int) *T {
	var best *T
	for _, v := range vs {
		if v == nil {
			return nil
		}
		if best == nil || cmp.Compare(*v, *best) == want {
			best = v
		}
	}
	return best
}
