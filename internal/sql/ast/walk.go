package ast

// Inspect calls f on e and, while f returns true, on each expression
// inside it, depth first. It does not enter subqueries: their
// expressions belong to another query.
func Inspect(e Expr, f func(Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	each := func(es ...Expr) {
		for _, x := range es {
			Inspect(x, f)
		}
	}
	switch e := e.(type) {
	case *Unary:
		each(e.X)
	case *Binary:
		each(e.L, e.R)
	case *Is:
		each(e.X)
	case *Between:
		each(e.X, e.Lo, e.Hi)
	case *In:
		each(e.X)
		each(e.List...)
	case *Like:
		each(e.X, e.Pattern, e.Escape)
	case *Call:
		each(e.Args...)
		each(e.Filter)
	case *NamedArg:
		each(e.Value)
	case *Cast:
		each(e.X)
	case *Extract:
		each(e.X)
	case *Case:
		each(e.Operand)
		for _, w := range e.Whens {
			each(w.Cond, w.Result)
		}
		each(e.Else)
	case *Constructor:
		each(e.Elems...)
	case *Index:
		each(e.X, e.Index)
	}
}
