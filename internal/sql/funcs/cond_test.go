package funcs

import "testing"

func p[T any](v T) *T { return &v }

func TestCoalesce(t *testing.T) {
	if got := Coalesce(nil, p("a"), p("b")); got == nil || *got != "a" {
		t.Errorf("COALESCE(NULL, 'a', 'b') = %v", got)
	}
	if got := Coalesce[int64](nil, nil); got != nil {
		t.Errorf("COALESCE(NULL, NULL) = %v", *got)
	}
}

func TestNullIf(t *testing.T) {
	if got := NullIf(p(5), p(5)); got != nil {
		t.Errorf("NULLIF(5, 5) = %v", *got)
	}
	if got := NullIf(p(5), p(0)); got == nil || *got != 5 {
		t.Errorf("NULLIF(5, 0) = %v", got)
	}
	if got := NullIf(p(5), nil); got == nil || *got != 5 {
		t.Errorf("NULLIF(5, NULL) = %v", got)
	}
	if got := NullIf(nil, p(5)); got != nil {
		t.Errorf("NULLIF(NULL, 5) = %v", *got)
	}
}

func TestIfTreatsANullConditionAsFalse(t *testing.T) {
	for _, tc := range []struct {
		cond *bool
		want string
	}{{p(true), "then"}, {p(false), "else"}, {nil, "else"}} {
		if got := If(tc.cond, p("then"), p("else")); *got != tc.want {
			t.Errorf("IF(%v) = %q, want %q", tc.cond, *got, tc.want)
		}
	}
}

func TestGreatestAndLeastAreNullWhenAnyArgumentIs(t *testing.T) {
	if got := Greatest(p(int64(1)), p(int64(9)), p(int64(3))); got == nil || *got != 9 {
		t.Errorf("GREATEST = %v", got)
	}
	if got := Least(p("b"), p("a"), p("c")); got == nil || *got != "a" {
		t.Errorf("LEAST = %v", got)
	}
	if got := Greatest(p(1.5), nil); got != nil {
		t.Errorf("GREATEST(1.5, NULL) = %v", *got)
	}
	if got := Least[int32](); got != nil {
		t.Errorf("LEAST() = %v", *got)
	}
}
