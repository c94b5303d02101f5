package expr

// Simplify returns e with what is decided before any row is read taken
// out: a constant subexpression becomes its literal, a CASE loses the
// branches whose condition is constantly FALSE or NULL and ends at the
// first one constantly TRUE, and an AND loses its constantly TRUE
// operands. The result evaluates as e does on every row; its type is
// e's but for nullability (a CASE narrowed to one branch has that
// branch's). The planner calls it after replacing columns by constants
// (a scan of a source that only gives rows with event_type = 2).
func Simplify(e Expr) Expr {
	switch x := e.(type) {
	case nil, *Col, *Lit, *ProcTime:
		return e
	case *Case:
		out := &Case{T: x.T, Else: Simplify(x.Else)}
		for _, w := range x.Whens {
			cond := Simplify(w.Cond)
			if v, ok := cond.(*Lit); ok {
				if v.V.IsNull() || !v.V.Bool() {
					continue // never taken
				}
				if len(out.Whens) == 0 {
					return Simplify(w.Result) // always taken
				}
				out.Else = Simplify(w.Result)
				break
			}
			out.Whens = append(out.Whens, When{Cond: cond, Result: Simplify(w.Result)})
		}
		if len(out.Whens) == 0 {
			return out.Else
		}
		return out
	case *Op:
		args := make([]Expr, len(x.Args))
		for i, a := range x.Args {
			args[i] = Simplify(a)
		}
		if x.Op == "AND" {
			if isTrue(args[0]) {
				return args[1]
			}
			if isTrue(args[1]) {
				return args[0]
			}
		}
		e = &Op{Op: x.Op, Args: args, T: x.T}
	case *Cast:
		e = &Cast{X: Simplify(x.X), T: x.T, Try: x.Try}
	}
	if v, ok := Fold(e); ok {
		return &Lit{V: v, T: e.Type()}
	}
	return e
}

// isTrue reports whether e is the literal TRUE.
func isTrue(e Expr) bool {
	l, ok := e.(*Lit)
	return ok && !l.V.IsNull() && l.V.Bool()
}
