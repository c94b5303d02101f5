package expr

import (
	"testing"

	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// With event_type replaced by the constant 2, nexmark's dateTime CASE
// becomes the bid's column and the filter event_type = 2 becomes TRUE;
// a CASE whose conditions are not all decided keeps the undecided ones,
// and every simplified expression evaluates as the original on rows.
func TestSimplifyTakesOutWhatConstantsDecide(t *testing.T) {
	two := &Lit{V: row.Int(2), T: types.IntType}
	is := func(k int64) Expr { return op(t, "=", two, &Lit{V: row.Int(int32(k)), T: types.IntType}) }
	when := func(c, r Expr) When { return When{Cond: c, Result: r} }
	dateCase, err := NewCase([]When{when(is(0), auction), when(is(1), bidder)}, price)
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := NewCase([]When{when(is(0), auction), when(op(t, ">", price, bidder), bidder), when(is(2), price)}, auction)
	if err != nil {
		t.Fatal(err)
	}
	filter := op(t, "AND", is(2), op(t, ">", price, auction))
	for _, c := range []struct {
		in   Expr
		want string
	}{
		{dateCase, "price"},
		{is(2), "TRUE"},
		{filter, "(price > auction)"},
		{mixed, "CASE WHEN (price > bidder) THEN bidder ELSE price END"},
		{op(t, "+", price, op(t, "*", two, two)), "(price + 4)"},
	} {
		got := Simplify(c.in)
		if got.String() != c.want {
			t.Errorf("Simplify(%s) = %s, want %s", c.in, got, c.want)
		}
		before, err := Compile(c.in)
		if err != nil {
			t.Fatal(err)
		}
		after, err := Compile(got)
		if err != nil {
			t.Fatal(err)
		}
		for _, vals := range [][]row.Value{bid(t, 3, 10, "a", "u", "2015-07-15 00:00:01", "x"), bid(t, 30, 1, "a", "u", "2015-07-15 00:00:01", "x"), nulls()} {
			b, errB := before(vals)
			a, errA := after(vals)
			if b != a || (errA == nil) != (errB == nil) {
				t.Errorf("%s = %v, %v on %v; simplified %s = %v, %v", c.in, b.Text(), errB, vals, got, a.Text(), errA)
			}
		}
	}
}
