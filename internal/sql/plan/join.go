package plan

import (
	"github.com/weir-stream/weir/internal/sql/ast"
	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/types"
)

// planJoin decides how l and r join under conds (over the joined row):
// conditions on one side of an inner join are pushed below it as
// filters, equalities between the sides become keys (an expression
// becomes a computed key column), and the join is a window join when
// the keys include both sides' window bounds, an interval join when
// the rest bounds one side's event time by the other's, a temporal join
// when asOf is set, and a regular join otherwise.
func planJoin(pos ast.Pos, l, r Node, kind JoinKind, conds []expr.Expr, asOf *expr.Col) (Node, error) {
	nl, nr := len(l.Columns()), len(r.Columns())
	var lf, rf, rest []expr.Expr
	type pair struct{ l, r expr.Expr }
	var keys []pair
	for _, c := range conds {
		left, right := sides(c, nl)
		switch {
		case kind == Inner && asOf == nil && left && !right:
			lf = append(lf, c)
			continue
		case (kind == Inner || kind == Left) && right && !left:
			rf = append(rf, shift(c, -nl))
			continue
		}
		if op, ok := c.(*expr.Op); ok && op.Op == "=" {
			al, ar := sides(op.Args[0], nl)
			bl, br := sides(op.Args[1], nl)
			switch {
			case al && !ar && br && !bl:
				keys = append(keys, pair{op.Args[0], shift(op.Args[1], -nl)})
				continue
			case ar && !al && bl && !br:
				keys = append(keys, pair{op.Args[1], shift(op.Args[0], -nl)})
				continue
			}
		}
		rest = append(rest, c)
	}
	if len(lf) > 0 {
		c := identity(l)
		c.Filter = andAll(lf)
		l = c
	}
	if len(rf) > 0 {
		c := identity(r)
		c.Filter = andAll(rf)
		r = c
	}
	// Key expressions that are not columns become columns of their side.
	var lExtra, rExtra []expr.Expr
	keyCol := func(e expr.Expr, n int, extra *[]expr.Expr) int {
		if c, ok := e.(*expr.Col); ok {
			return c.Index
		}
		*extra = append(*extra, e)
		return n + len(*extra) - 1
	}
	j := &Join{Kind: kind, Strategy: RegularJoin}
	for _, k := range keys {
		j.LeftKeys = append(j.LeftKeys, keyCol(k.l, nl, &lExtra))
		j.RightKeys = append(j.RightKeys, keyCol(k.r, nr, &rExtra))
	}
	l, r = extend(l, lExtra), extend(r, rExtra)
	nl2 := nl + len(lExtra)
	m := make([]int, nl+nr)
	for i := range m {
		m[i] = i
		if i >= nl {
			m[i] = i - nl + nl2
		}
	}
	for i := range rest {
		rest[i] = remap(rest[i], m)
	}
	j.L, j.R = l, r
	lc, rc := l.Columns(), r.Columns()
	switch {
	case asOf != nil:
		j.Strategy = TemporalJoin
		j.LeftTime, j.ProcTime = asOf.Index, asOf.T.Time == types.ProcTime
		if len(j.LeftKeys) == 0 {
			return nil, errorAt(pos, "a temporal join needs an equality between the two sides' keys")
		}
		if !j.ProcTime && len(r.Columns()) > 0 {
			if s, ok := r.(*Scan); !ok || len(s.Table.PrimaryKey) == 0 {
				return nil, errorAt(pos, "an event-time temporal join needs a versioned table: a table with a PRIMARY KEY (and a watermark)")
			}
		}
	case windowJoin(j, lc, rc):
	case kind == Inner && !l.Updating() && !r.Updating():
		rest = intervalJoin(j, rest, lc, rc, nl2)
	}
	j.Cond = andAll(rest)
	if len(lExtra)+len(rExtra) == 0 {
		return j, nil
	}
	// Drop the computed key columns again.
	out := &Calc{In: j}
	cols := j.Columns()
	for i := range nl + nr {
		src := i
		if i >= nl {
			src = i - nl + nl2
		}
		c := cols[src]
		out.Proj = append(out.Proj, &expr.Col{Index: src, Name: c.Name, T: c.T})
		out.Names = append(out.Names, c.Name)
		out.Quals = append(out.Quals, c.Table)
	}
	return out, nil
}

// extend returns n with the columns es appended (n itself if none).
func extend(n Node, es []expr.Expr) Node {
	if len(es) == 0 {
		return n
	}
	c := identity(n)
	for i, e := range es {
		c.Proj = append(c.Proj, e)
		c.Names = append(c.Names, "$key"+string(rune('0'+i)))
		c.Quals = append(c.Quals, "")
	}
	return c
}

// windowJoin makes j a window join if its keys pair both sides'
// window_start and window_end, taking those out of the keys.
func windowJoin(j *Join, lc, rc []Column) bool {
	var start, end = -1, -1
	for i := range j.LeftKeys {
		a, b := lc[j.LeftKeys[i]], rc[j.RightKeys[i]]
		switch {
		case a.Win == WindowStart && b.Win == WindowStart:
			start = i
		case a.Win == WindowEnd && b.Win == WindowEnd:
			end = i
		}
	}
	if start < 0 || end < 0 {
		return false
	}
	j.Strategy = WindowJoin
	j.LeftWindow = [2]int{j.LeftKeys[start], j.LeftKeys[end]}
	j.RightWindow = [2]int{j.RightKeys[start], j.RightKeys[end]}
	var lk, rk []int
	for i := range j.LeftKeys {
		if i != start && i != end {
			lk, rk = append(lk, j.LeftKeys[i]), append(rk, j.RightKeys[i])
		}
	}
	j.LeftKeys, j.RightKeys = lk, rk
	return true
}

// intervalJoin makes j an interval join if conditions bound the right
// side's event time by the left's from both sides (r.t >= l.t + a, r.t
// <= l.t + b, in any of the ways SQL writes them), returning the
// conditions left over.
func intervalJoin(j *Join, conds []expr.Expr, lc, rc []Column, nl int) []expr.Expr {
	lt, rt := -1, -1
	var lower, upper *int64
	var left []expr.Expr
	for _, c := range conds {
		lo, hi, lcol, rcol, ok := timeBound(c, nl)
		if !ok || lc[lcol].T.Time != types.RowTime || rc[rcol].T.Time != types.RowTime ||
			(lt >= 0 && (lcol != lt || rcol != rt)) {
			left = append(left, c)
			continue
		}
		lt, rt = lcol, rcol
		if lo != nil && (lower == nil || *lo > *lower) {
			lower = lo
		}
		if hi != nil && (upper == nil || *hi < *upper) {
			upper = hi
		}
	}
	if lower == nil || upper == nil || len(j.LeftKeys) == 0 {
		return conds
	}
	j.Strategy = IntervalJoin
	j.LeftTime, j.RightTime, j.Lower, j.Upper = lt, rt, *lower, *upper
	return left
}

// timeBound reads a comparison between a left column (± an interval)
// and a right column (± an interval) as a bound on right - left.
func timeBound(c expr.Expr, nl int) (lower, upper *int64, lcol, rcol int, ok bool) {
	op, isOp := c.(*expr.Op)
	if !isOp || len(op.Args) != 2 {
		return nil, nil, 0, 0, false
	}
	a, ao, aok := colPlus(op.Args[0])
	b, bo, bok := colPlus(op.Args[1])
	if !aok || !bok {
		return nil, nil, 0, 0, false
	}
	cmp := op.Op
	// Normalize to right ⋈ left: right_col + ro  cmp  left_col + lo.
	if a < nl && b >= nl {
		a, b, ao, bo = b, a, bo, ao
		cmp = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}[cmp]
	} else if !(a >= nl && b < nl) {
		return nil, nil, 0, 0, false
	}
	// r + ao cmp l + bo  ⇔  r - l cmp bo - ao
	d := bo - ao
	switch cmp {
	case ">=":
		lower = &d
	case ">":
		d++
		lower = &d
	case "<=":
		upper = &d
	case "<":
		d--
		upper = &d
	case "=":
		lower, upper = &d, &d
	default:
		return nil, nil, 0, 0, false
	}
	return lower, upper, b, a - nl, true
}

// colPlus reads col, col + INTERVAL or col - INTERVAL.
func colPlus(e expr.Expr) (col int, offset int64, ok bool) {
	switch e := e.(type) {
	case *expr.Col:
		return e.Index, 0, true
	case *expr.Op:
		if (e.Op == "+" || e.Op == "-") && len(e.Args) == 2 {
			c, cok := e.Args[0].(*expr.Col)
			lit, lok := e.Args[1].(*expr.Lit)
			if cok && lok && lit.T.Kind == types.Interval {
				if e.Op == "-" {
					return c.Index, -lit.V.I, true
				}
				return c.Index, lit.V.I, true
			}
		}
	}
	return 0, 0, false
}
