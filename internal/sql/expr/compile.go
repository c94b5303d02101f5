package expr

import (
	"fmt"
	"math"

	"github.com/weir-stream/weir/internal/sql/funcs"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// Eval evaluates a compiled expression on the values of one row (in the
// column order the expression's Col indexes refer to). An error fails
// the query: a CAST of unreadable text, a division by zero, a failing
// user function. An Eval from Compile keeps no state between calls and
// may be called from several goroutines at once; one from CompileOwned
// may keep state and is one goroutine's.
type Eval func(vals []row.Value) (row.Value, error)

// Compile turns a bound expression into a closure. Constant subtrees are
// evaluated once here (a subtree whose evaluation fails is left to fail
// at run time, should it be reached); user functions are never folded.
func Compile(e Expr) (Eval, error) {
	ev, _, err := compile(e, false)
	return ev, err
}

// CompileOwned is Compile for a caller that calls the Eval from one
// goroutine only (an operator's subtask that compiled it for itself).
// Such an Eval may keep what one call computed for the next:
// DATE_FORMAT with a constant pattern keeps the text of the last period
// it formatted (funcs.FormatMemo).
func CompileOwned(e Expr) (Eval, error) {
	ev, _, err := compile(e, true)
	return ev, err
}

// CompilePredicate compiles a BOOLEAN expression as a filter: NULL is
// false, as in WHERE and HAVING.
func CompilePredicate(e Expr) (func([]row.Value) (bool, error), error) {
	if k := e.Type().Kind; k != types.Boolean && k != types.Null {
		return nil, fmt.Errorf("a condition must be BOOLEAN, got %s", e.Type().Plain())
	}
	ev, err := Compile(e)
	if err != nil {
		return nil, err
	}
	return func(vals []row.Value) (bool, error) {
		v, err := ev(vals)
		return !v.IsNull() && v.I != 0, err
	}, nil
}

// Fold returns the value of e if it is constant (reads no column and
// calls no user function) and evaluates without error.
func Fold(e Expr) (row.Value, bool) {
	ev, constant, err := compile(e, false)
	if err != nil || !constant {
		return row.Value{}, false
	}
	v, err := ev(nil)
	return v, err == nil
}

func constEval(v row.Value) Eval { return func([]row.Value) (row.Value, error) { return v, nil } }

// compile returns e's closure and whether e is constant; own as
// CompileOwned.
func compile(e Expr, own bool) (Eval, bool, error) {
	switch e := e.(type) {
	case *Col:
		i := e.Index
		return func(vals []row.Value) (row.Value, error) { return vals[i], nil }, false, nil
	case *Lit:
		return constEval(e.V), true, nil
	case *UDF:
		ev, err := compileUDF(e, own)
		return ev, false, err
	case *ProcTime:
		return nil, false, fmt.Errorf("PROCTIME() can only be a column of its own (SELECT ..., PROCTIME() AS p), read as a time attribute")
	case *Cast, *Op, *Call, *Case, *In:
	default:
		return nil, false, fmt.Errorf("cannot compile %T", e)
	}
	children := Children(e)
	evs := make([]Eval, len(children))
	constant := true
	for i, c := range children {
		ev, k, err := compile(c, own)
		if err != nil {
			return nil, false, err
		}
		evs[i], constant = ev, constant && k
	}
	var ev Eval
	var err error
	switch e := e.(type) {
	case *Cast:
		ev, err = compileCast(e, evs[0])
	case *Op:
		ev, err = compileOp(e, evs)
	case *Call:
		ev, err = compileCall(e, evs, own)
	case *Case:
		ev = compileCase(evs)
	case *In:
		ev = compileIn(e.Not, evs[0], evs[1:])
	}
	if err != nil {
		return nil, false, err
	}
	if constant {
		if v, err := ev(nil); err == nil {
			return constEval(v), true, nil
		}
	}
	return ev, constant, nil
}

func compileCast(e *Cast, x Eval) (Eval, error) {
	c, err := castFunc(e.X.Type(), e.T, e.Try)
	if err != nil {
		return nil, err
	}
	if widensInteger(e.X.Type(), e.T) {
		// The implicit cast of integer arithmetic with decimals: the
		// unscaled value is the integer itself.
		return func(vals []row.Value) (row.Value, error) {
			v, err := x(vals)
			if !v.IsNull() {
				v.K = types.Decimal
			}
			return v, err
		}, nil
	}
	return func(vals []row.Value) (row.Value, error) {
		v, err := x(vals)
		if err != nil {
			return v, err
		}
		r, err := c(v)
		if err != nil {
			return r, fmt.Errorf("%s: %w", e, err)
		}
		return r, nil
	}, nil
}

// widensInteger reports whether CAST(from AS to) turns an integer into
// a DECIMAL(p, 0) that holds every value of its type.
func widensInteger(from, to types.Type) bool {
	return to.Kind == types.Decimal && to.Scale == 0 &&
		(from.Kind == types.Int && to.Precision >= 10 || from.Kind == types.BigInt && to.Precision >= 19)
}

func compileCase(evs []Eval) Eval {
	n := len(evs) / 2
	return func(vals []row.Value) (row.Value, error) {
		for i := 0; i < n; i++ {
			c, err := evs[2*i](vals)
			if err != nil {
				return c, err
			}
			if !c.IsNull() && c.I != 0 {
				return evs[2*i+1](vals)
			}
		}
		return evs[2*n](vals)
	}
}

func compileIn(not bool, x Eval, list []Eval) Eval {
	return func(vals []row.Value) (row.Value, error) {
		v, err := x(vals)
		if err != nil || v.IsNull() {
			return row.Null(), err
		}
		sawNull := false
		for _, ev := range list {
			w, err := ev(vals)
			if err != nil {
				return w, err
			}
			if w.IsNull() {
				sawNull = true
			} else if row.Compare(v, w) == 0 {
				return row.Bool(!not), nil
			}
		}
		if sawNull {
			return row.Null(), nil
		}
		return row.Bool(not), nil
	}
}

func compileUDF(e *UDF, own bool) (Eval, error) {
	evs := make([]Eval, len(e.Args))
	for i, a := range e.Args {
		ev, _, err := compile(a, own)
		if err != nil {
			return nil, err
		}
		evs[i] = ev
	}
	f := e.Fn
	return func(vals []row.Value) (row.Value, error) {
		args := make([]row.Value, len(evs))
		for i, ev := range evs {
			v, err := ev(vals)
			if err != nil {
				return v, err
			}
			if v.IsNull() && f.Strict {
				return row.Null(), nil
			}
			args[i] = v
		}
		v, err := f.Eval(args)
		if err != nil {
			return row.Null(), fmt.Errorf("%s: %w", f.Name, err)
		}
		return v, nil
	}, nil
}

// binary returns the closure of a strict operator on two values.
func binary(a, b Eval, f func(x, y row.Value) (row.Value, error)) Eval {
	return func(vals []row.Value) (row.Value, error) {
		x, err := a(vals)
		if err != nil || x.IsNull() {
			return row.Null(), err
		}
		y, err := b(vals)
		if err != nil || y.IsNull() {
			return row.Null(), err
		}
		return f(x, y)
	}
}

func unary(a Eval, f func(x row.Value) row.Value) Eval {
	return func(vals []row.Value) (row.Value, error) {
		x, err := a(vals)
		if err != nil || x.IsNull() {
			return row.Null(), err
		}
		return f(x), nil
	}
}

func compileOp(e *Op, evs []Eval) (Eval, error) {
	switch e.Op {
	case "+", "-", "*", "/", "%":
		return compileArithmetic(e, evs[0], evs[1])
	case "=", "<>", "<", "<=", ">", ">=":
		test := comparison(e.Op)
		return binary(evs[0], evs[1], func(x, y row.Value) (row.Value, error) {
			return row.Bool(test(row.Compare(x, y))), nil
		}), nil
	case "IS DISTINCT FROM", "IS NOT DISTINCT FROM":
		distinct := e.Op == "IS DISTINCT FROM"
		a, b := evs[0], evs[1]
		return func(vals []row.Value) (row.Value, error) {
			x, err := a(vals)
			if err != nil {
				return x, err
			}
			y, err := b(vals)
			if err != nil {
				return y, err
			}
			same := x.IsNull() == y.IsNull() && (x.IsNull() || row.Compare(x, y) == 0)
			return row.Bool(same != distinct), nil
		}, nil
	case "AND", "OR":
		return logic(e.Op == "AND", evs[0], evs[1]), nil
	case "NOT":
		return unary(evs[0], func(x row.Value) row.Value { return row.Bool(x.I == 0) }), nil
	case "NEG":
		return compileNeg(e.T, evs[0]), nil
	case "||":
		return binary(evs[0], evs[1], func(x, y row.Value) (row.Value, error) { return row.String(x.S + y.S), nil }), nil
	case "IS NULL", "IS NOT NULL", "IS TRUE", "IS NOT TRUE", "IS FALSE", "IS NOT FALSE":
		test := isTest(e.Op)
		a := evs[0]
		return func(vals []row.Value) (row.Value, error) {
			x, err := a(vals)
			if err != nil {
				return x, err
			}
			return row.Bool(test(x)), nil
		}, nil
	}
	return nil, fmt.Errorf("cannot compile operator %s", e.Op)
}

func comparison(op string) func(c int) bool {
	switch op {
	case "=":
		return func(c int) bool { return c == 0 }
	case "<>":
		return func(c int) bool { return c != 0 }
	case "<":
		return func(c int) bool { return c < 0 }
	case "<=":
		return func(c int) bool { return c <= 0 }
	case ">":
		return func(c int) bool { return c > 0 }
	}
	return func(c int) bool { return c >= 0 }
}

func isTest(op string) func(x row.Value) bool {
	switch op {
	case "IS NULL":
		return func(x row.Value) bool { return x.IsNull() }
	case "IS NOT NULL":
		return func(x row.Value) bool { return !x.IsNull() }
	case "IS TRUE":
		return func(x row.Value) bool { return !x.IsNull() && x.I != 0 }
	case "IS NOT TRUE":
		return func(x row.Value) bool { return x.IsNull() || x.I == 0 }
	case "IS FALSE":
		return func(x row.Value) bool { return !x.IsNull() && x.I == 0 }
	}
	return func(x row.Value) bool { return x.IsNull() || x.I != 0 } // IS NOT FALSE
}

// logic is AND (and true) or OR with SQL's three-valued logic: the
// deciding value (FALSE for AND, TRUE for OR) wins over NULL, and the
// right side is not evaluated once the left decides.
func logic(and bool, a, b Eval) Eval {
	decide := int64(0)
	if !and {
		decide = 1
	}
	return func(vals []row.Value) (row.Value, error) {
		x, err := a(vals)
		if err != nil {
			return x, err
		}
		if !x.IsNull() && x.I == decide {
			return x, nil
		}
		y, err := b(vals)
		if err != nil {
			return y, err
		}
		if !y.IsNull() && y.I == decide {
			return y, nil
		}
		if x.IsNull() || y.IsNull() {
			return row.Null(), nil
		}
		return x, nil
	}
}

func compileNeg(t types.Type, a Eval) Eval {
	switch t.Kind {
	case types.Int:
		return unary(a, func(x row.Value) row.Value { return row.Int(-int32(x.I)) })
	case types.Double:
		return unary(a, func(x row.Value) row.Value { return row.Double(-x.Float()) })
	}
	return unary(a, func(x row.Value) row.Value { x.I = -x.I; return x })
}

func divByZero(e *Op) error { return fmt.Errorf("%s: %w", e, funcs.ErrDivisionByZero) }

func compileArithmetic(e *Op, a, b Eval) (Eval, error) {
	op := e.Op
	ta, tb := e.Args[0].Type(), e.Args[1].Type()
	switch e.T.Kind {
	case types.Int:
		return binary(a, b, func(x, y row.Value) (row.Value, error) {
			i, j := int32(x.I), int32(y.I)
			switch op {
			case "+":
				return row.Int(i + j), nil
			case "-":
				return row.Int(i - j), nil
			case "*":
				return row.Int(i * j), nil
			}
			if j == 0 {
				return row.Null(), divByZero(e)
			}
			if op == "/" {
				return row.Int(i / j), nil
			}
			return row.Int(i % j), nil
		}), nil
	case types.BigInt:
		return binary(a, b, func(x, y row.Value) (row.Value, error) {
			i, j := x.I, y.I
			switch op {
			case "+":
				return row.BigInt(i + j), nil
			case "-":
				return row.BigInt(i - j), nil
			case "*":
				return row.BigInt(i * j), nil
			}
			if j == 0 {
				return row.Null(), divByZero(e)
			}
			if op == "/" {
				return row.BigInt(i / j), nil
			}
			return row.BigInt(i % j), nil
		}), nil
	case types.Double:
		return binary(a, b, func(x, y row.Value) (row.Value, error) {
			f, g := x.Float(), y.Float()
			switch op {
			case "+":
				return row.Double(f + g), nil
			case "-":
				return row.Double(f - g), nil
			case "*":
				return row.Double(f * g), nil
			case "/":
				return row.Double(f / g), nil
			}
			return row.Double(math.Mod(f, g)), nil
		}), nil
	case types.Decimal:
		return compileDecimal(e, a, b, ta.Scale, tb.Scale), nil
	case types.Timestamp, types.Interval:
		sub := op == "-"
		return binary(a, b, func(x, y row.Value) (row.Value, error) {
			r := x.I + y.I
			if sub {
				r = x.I - y.I
			}
			if e.T.Kind == types.Timestamp {
				return row.Timestamp(r), nil
			}
			return row.Interval(r), nil
		}), nil
	}
	return nil, fmt.Errorf("cannot compile %s on %s", op, e.T)
}

func compileDecimal(e *Op, a, b Eval, sa, sb int32) Eval {
	p, s := e.T.Precision, e.T.Scale
	var f func(x, y int64) (int64, bool)
	switch e.Op {
	case "+", "-":
		sub := e.Op == "-"
		f = func(x, y int64) (int64, bool) { return decAdd(x, sa, y, sb, s, sub) }
	case "*":
		f = func(x, y int64) (int64, bool) { return decMul(x, sa, y, sb, s) }
	case "/":
		f = func(x, y int64) (int64, bool) { return decDiv(x, sa, y, sb, s) }
	default:
		f = func(x, y int64) (int64, bool) { return decMod(x, sa, y, sb, s) }
	}
	div := e.Op == "/" || e.Op == "%"
	return binary(a, b, func(x, y row.Value) (row.Value, error) {
		if div && y.I == 0 {
			return row.Null(), divByZero(e)
		}
		r, ok := f(x.I, y.I)
		if !ok || !fits(r, p) {
			return row.Null(), nil
		}
		return row.Decimal(r), nil
	})
}
