package naive

import (
	"slices"

	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/plan"
	"github.com/weir-stream/weir/internal/sql/row"
)

// join pairs every row of l with every row of r and keeps the pairs the
// join matches: equal keys (NULL matching nothing), for an interval
// join R's time minus L's within the bounds, for a window join the same
// window, and the condition. An outer join adds each side's unmatched
// rows padded with NULLs. A temporal join is joined with r as a static
// table, its final rows.
func join(n *plan.Join, l, r []row.Row) ([]row.Row, error) {
	cond := func([]row.Value) (bool, error) { return true, nil }
	if n.Cond != nil {
		var err error
		if cond, err = expr.CompilePredicate(n.Cond); err != nil {
			return nil, err
		}
	}
	nl, nr := len(n.L.Columns()), len(n.R.Columns())
	matches := func(a, b row.Row) bool {
		for i := range n.LeftKeys {
			if !sqlEqual(a.V[n.LeftKeys[i]], b.V[n.RightKeys[i]]) {
				return false
			}
		}
		switch n.Strategy {
		case plan.IntervalJoin:
			lt, rt := a.V[n.LeftTime], b.V[n.RightTime]
			if lt.IsNull() || rt.IsNull() || rt.I-lt.I < n.Lower || rt.I-lt.I > n.Upper {
				return false
			}
		case plan.WindowJoin:
			for i := range 2 {
				if !sqlEqual(a.V[n.LeftWindow[i]], b.V[n.RightWindow[i]]) {
					return false
				}
			}
		}
		return true
	}
	var out []row.Row
	rightMatched := make([]bool, len(r))
	for _, a := range l {
		matched := false
		for j, b := range r {
			if !matches(a, b) {
				continue
			}
			vals := append(slices.Clone(a.V), b.V...)
			ok, err := cond(vals)
			if err != nil {
				return nil, err
			}
			if ok {
				matched, rightMatched[j] = true, true
				out = append(out, row.New(vals...))
			}
		}
		if !matched && (n.Kind == plan.Left || n.Kind == plan.Full) {
			out = append(out, row.New(append(slices.Clone(a.V), nulls(nr)...)...))
		}
	}
	if n.Kind == plan.Right || n.Kind == plan.Full {
		for j, b := range r {
			if !rightMatched[j] {
				out = append(out, row.New(append(nulls(nl), b.V...)...))
			}
		}
	}
	return out, nil
}
