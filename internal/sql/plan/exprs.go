package plan

import (
	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/types"
)

// columnsOf calls f with the index of every column e reads.
func columnsOf(e expr.Expr, f func(int)) {
	if e == nil {
		return
	}
	if c, ok := e.(*expr.Col); ok {
		f(c.Index)
		return
	}
	for _, x := range expr.Children(e) {
		columnsOf(x, f)
	}
}

// replace returns e with every column replaced by what col returns for
// it; the rest of the tree is copied where it changes. Types stay as
// they are, so the replacement must have the column's type.
func replace(e expr.Expr, col func(*expr.Col) expr.Expr) expr.Expr {
	if e == nil {
		return nil
	}
	args := func(xs []expr.Expr) []expr.Expr {
		out := make([]expr.Expr, len(xs))
		for i, x := range xs {
			out[i] = replace(x, col)
		}
		return out
	}
	switch e := e.(type) {
	case *expr.Col:
		return col(e)
	case *expr.Call:
		c := *e
		c.Args = args(e.Args)
		return &c
	case *expr.Op:
		c := *e
		c.Args = args(e.Args)
		return &c
	case *expr.Case:
		c := *e
		c.Whens = make([]expr.When, len(e.Whens))
		for i, w := range e.Whens {
			c.Whens[i] = expr.When{Cond: replace(w.Cond, col), Result: replace(w.Result, col)}
		}
		c.Else = replace(e.Else, col)
		return &c
	case *expr.Cast:
		c := *e
		c.X = replace(e.X, col)
		return &c
	case *expr.In:
		c := *e
		c.X = replace(e.X, col)
		c.List = args(e.List)
		return &c
	case *expr.UDF:
		c := *e
		c.Args = args(e.Args)
		return &c
	}
	return e
}

// remap returns e reading column m[i] where it read column i.
func remap(e expr.Expr, m []int) expr.Expr {
	return replace(e, func(c *expr.Col) expr.Expr {
		d := *c
		d.Index = m[c.Index]
		return &d
	})
}

// shift returns e reading column i+by where it read column i.
func shift(e expr.Expr, by int) expr.Expr {
	return replace(e, func(c *expr.Col) expr.Expr {
		d := *c
		d.Index += by
		return &d
	})
}

// splitAnd returns the conjuncts of an AND tree.
func splitAnd(e expr.Expr) []expr.Expr {
	if e == nil {
		return nil
	}
	if op, ok := e.(*expr.Op); ok && op.Op == "AND" {
		return append(splitAnd(op.Args[0]), splitAnd(op.Args[1])...)
	}
	return []expr.Expr{e}
}

// andAll joins conditions with AND; nil for none.
func andAll(es []expr.Expr) expr.Expr {
	var out expr.Expr
	for _, e := range es {
		if out == nil {
			out = e
			continue
		}
		out = &expr.Op{Op: "AND", Args: []expr.Expr{out, e}, T: types.Type{Kind: types.Boolean, NotNull: out.Type().NotNull && e.Type().NotNull}}
	}
	return out
}

// sides tells whether e reads columns below n (left), at or above n
// (right), both or none.
func sides(e expr.Expr, n int) (left, right bool) {
	columnsOf(e, func(i int) {
		if i < n {
			left = true
		} else {
			right = true
		}
	})
	return left, right
}
