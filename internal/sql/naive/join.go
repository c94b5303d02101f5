package naive

import (
	"fmt"
	"slices"

	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/plan"
	"github.com/weir-stream/weir/internal/sql/row"
)

// join pairs every row of l with every row of r and keeps the pairs the
// join matches: equal keys (NULL matching nothing), for an interval
// join R's time minus L's within the bounds, for a window join the same
// window, and the condition. An outer join adds each side's unmatched
// rows padded with NULLs. An event-time temporal join matches a row of
// l only with the version of r's rows with its keys valid at its time;
// a processing-time one, with r's final rows (r taken as static).
func join(n *plan.Join, l, r []row.Row) ([]row.Row, error) {
	cond := func([]row.Value) (bool, error) { return true, nil }
	if n.Cond != nil {
		var err error
		if cond, err = expr.CompilePredicate(n.Cond); err != nil {
			return nil, err
		}
	}
	nl, nr := len(n.L.Columns()), len(n.R.Columns())
	keysMatch := func(a, b row.Row) bool {
		for i := range n.LeftKeys {
			if !sqlEqual(a.V[n.LeftKeys[i]], b.V[n.RightKeys[i]]) {
				return false
			}
		}
		return true
	}
	valid, err := versions(n, r, keysMatch)
	if err != nil {
		return nil, err
	}
	matches := func(a row.Row, j int) bool {
		b := r[j]
		if !keysMatch(a, b) {
			return false
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
		case plan.TemporalJoin:
			return valid == nil || valid(a, j)
		}
		return true
	}
	var out []row.Row
	rightMatched := make([]bool, len(r))
	for _, a := range l {
		matched := false
		for j, b := range r {
			if !matches(a, j) {
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

// versions returns, for an event-time temporal join, whether a row of r
// is the version valid at a row of l's time: the last of the rows with
// l's keys whose rowtime is at or before it (by index into r). Nil for
// other joins.
func versions(n *plan.Join, r []row.Row, keysMatch func(a, b row.Row) bool) (func(a row.Row, j int) bool, error) {
	if n.Strategy != plan.TemporalJoin || n.ProcTime {
		return nil, nil
	}
	s, ok := n.R.(*plan.Scan)
	if !ok {
		return nil, fmt.Errorf("naive: the versioned side of a temporal join is a %T, not a table", n.R)
	}
	rt := slices.Index(s.Cols, s.Table.RowTime)
	if rt < 0 {
		return nil, fmt.Errorf("naive: table %s has no rowtime", s.Table.Name)
	}
	return func(a row.Row, j int) bool {
		t := a.V[n.LeftTime]
		if t.IsNull() {
			return false
		}
		best := -1
		for i := range r {
			if v := r[i].V[rt]; !v.IsNull() && v.I <= t.I && keysMatch(a, r[i]) && (best < 0 || v.I >= r[best].V[rt].I) {
				best = i
			}
		}
		return best == j
	}, nil
}
