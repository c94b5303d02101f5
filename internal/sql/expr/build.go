package expr

import (
	"fmt"
	"strings"

	"github.com/weir-stream/weir/internal/sql/types"
)

// The constructors of this file type-check their arguments with Flink's
// rules and insert the implicit casts, so that a node built by them can
// be compiled without further checks. Their errors say what cannot be
// combined ("cannot compare VARCHAR with BIGINT"); the planner adds the
// position in the query.

var (
	boolType    = types.BooleanType
	boolNotNull = types.Type{Kind: types.Boolean, NotNull: true}
)

// NewOp binds operator op (see Op for the list; IS tests are written
// "IS NULL", "IS NOT DISTINCT FROM", ...) to its arguments: arithmetic
// takes the type of types.Arithmetic, comparisons cast both sides to
// their common type (types.Common), logic wants BOOLEAN, NEG a number
// or an interval, || two strings.
func NewOp(op string, args ...Expr) (Expr, error) {
	op = strings.ToUpper(op)
	if op == "!=" {
		op = "<>"
	}
	want := 2
	switch op {
	case "NOT", "NEG", "IS NULL", "IS NOT NULL", "IS TRUE", "IS NOT TRUE", "IS FALSE", "IS NOT FALSE":
		want = 1
	}
	if len(args) != want {
		return nil, fmt.Errorf("%s takes %d arguments, got %d", op, want, len(args))
	}
	args = append([]Expr(nil), args...) // casts replace arguments; the caller's slice stays
	switch op {
	case "+", "-", "*", "/", "%":
		return newArithmetic(op, args[0], args[1])
	case "=", "<>", "<", "<=", ">", ">=", "IS DISTINCT FROM", "IS NOT DISTINCT FROM":
		a, b := args[0], args[1]
		t, ok := types.Common(a.Type(), b.Type())
		if !ok || t.Kind == types.Row {
			return nil, fmt.Errorf("cannot compare %s with %s", a.Type().Plain().Nullable(), b.Type().Plain().Nullable())
		}
		if t.Kind == types.Null {
			t = boolType // NULL = NULL: both sides NULL of any type
		}
		rt := boolType
		rt.NotNull = t.NotNull || strings.HasPrefix(op, "IS")
		return &Op{Op: op, Args: []Expr{castTo(a, t), castTo(b, t)}, T: rt}, nil
	case "AND", "OR", "NOT":
		t := boolNotNull
		for i, a := range args {
			if k := a.Type().Kind; k != types.Boolean && k != types.Null {
				return nil, fmt.Errorf("%s takes BOOLEAN arguments, got %s", op, a.Type().Plain().Nullable())
			}
			args[i] = castTo(a, boolType)
			t.NotNull = t.NotNull && a.Type().NotNull
		}
		return &Op{Op: op, Args: args, T: t}, nil
	case "NEG":
		t := args[0].Type().Plain()
		if t.Kind == types.Null {
			t = types.IntType
		}
		if !t.IsNumeric() && t.Kind != types.Interval {
			return nil, fmt.Errorf("cannot negate %s", t)
		}
		return &Op{Op: op, Args: []Expr{castTo(args[0], t)}, T: t}, nil
	case "||":
		t := types.Type{Kind: types.Varchar, NotNull: true}
		for i, a := range args {
			if k := a.Type().Kind; k != types.Varchar && k != types.Null {
				return nil, fmt.Errorf("cannot concatenate %s with ||", a.Type().Plain().Nullable())
			}
			args[i] = castTo(a, types.VarcharType)
			t.NotNull = t.NotNull && a.Type().NotNull
		}
		return &Op{Op: op, Args: args, T: t}, nil
	case "IS NULL", "IS NOT NULL":
		return &Op{Op: op, Args: args, T: boolNotNull}, nil
	case "IS TRUE", "IS NOT TRUE", "IS FALSE", "IS NOT FALSE":
		if k := args[0].Type().Kind; k != types.Boolean && k != types.Null {
			return nil, fmt.Errorf("%s takes a BOOLEAN, got %s", op, args[0].Type().Plain().Nullable())
		}
		return &Op{Op: op, Args: []Expr{castTo(args[0], boolType)}, T: boolNotNull}, nil
	}
	return nil, fmt.Errorf("unknown operator %s", op)
}

func newArithmetic(op string, a, b Expr) (Expr, error) {
	ta, tb := a.Type(), b.Type()
	if ta.Kind == types.Null && tb.Kind == types.Null {
		ta, tb = types.IntType, types.IntType
	}
	t, err := types.Arithmetic(op, ta, tb)
	if err != nil {
		return nil, fmt.Errorf("cannot apply %s to %s and %s", op, ta.Plain().Nullable(), tb.Plain().Nullable())
	}
	t = t.Plain()
	switch {
	case t.Kind == types.Timestamp || t.Kind == types.Interval:
		if ta.Kind == types.Null {
			ta = tb
		}
		if tb.Kind == types.Null {
			tb = ta
		}
		return &Op{Op: op, Args: []Expr{castTo(a, ta.Plain()), castTo(b, tb.Plain())}, T: t}, nil
	case t.Kind == types.Decimal:
		// Each side keeps its own scale; the compiled operator aligns
		// them. Integers become the DECIMAL that holds them. A result
		// beyond the precision is NULL, so the type admits NULL.
		t.NotNull = false
		if ta.Kind == types.Null {
			ta = tb
		}
		if tb.Kind == types.Null {
			tb = ta
		}
		return &Op{Op: op, Args: []Expr{
			castTo(a, types.IntegerDecimal(ta.Plain())),
			castTo(b, types.IntegerDecimal(tb.Plain())),
		}, T: t}, nil
	}
	arg := types.Type{Kind: t.Kind}
	return &Op{Op: op, Args: []Expr{castTo(a, arg), castTo(b, arg)}, T: t}, nil
}

// castTo returns e converted to t (nullability and time attribute
// taken from e): e itself when it already has t's type, a typed NULL
// literal for an untyped NULL, else an implicit Cast.
func castTo(e Expr, t types.Type) Expr {
	et := e.Type()
	if et.Same(t) {
		return e
	}
	if l, ok := e.(*Lit); ok && et.Kind == types.Null {
		t.NotNull, t.Time = false, types.NoTime
		return &Lit{V: l.V, T: t}
	}
	t.NotNull, t.Time = et.NotNull, types.NoTime
	return &Cast{X: e, T: t}
}

// NewCast binds CAST(x AS t), or TRY_CAST when try is set. It fails for
// conversions Flink does not have (BOOLEAN to TIMESTAMP, ...).
func NewCast(x Expr, t types.Type, try bool) (Expr, error) {
	from := x.Type()
	if _, err := castFunc(from, t, try); err != nil {
		return nil, err
	}
	t.Time = types.NoTime
	t.NotNull = from.NotNull && !try && t.NotNull
	if from.Kind == types.Null {
		return &Lit{T: t.Nullable()}, nil
	}
	return &Cast{X: x, T: t, Try: try}, nil
}

// NewCase binds a searched CASE: each condition must be BOOLEAN, and
// the results are cast to their common type, which is the CASE's type.
// els may be nil (ELSE NULL).
func NewCase(whens []When, els Expr) (Expr, error) {
	if len(whens) == 0 {
		return nil, fmt.Errorf("CASE needs at least one WHEN")
	}
	if els == nil {
		els = NullLit()
	}
	t := els.Type()
	for _, w := range whens {
		if k := w.Cond.Type().Kind; k != types.Boolean && k != types.Null {
			return nil, fmt.Errorf("CASE's WHEN takes a BOOLEAN, got %s", w.Cond.Type().Plain().Nullable())
		}
		c, ok := types.Common(t, w.Result.Type())
		if !ok {
			return nil, fmt.Errorf("CASE cannot combine %s with %s", t.Plain().Nullable(), w.Result.Type().Plain().Nullable())
		}
		t = c
	}
	t = t.Plain()
	out := make([]When, len(whens))
	for i, w := range whens {
		out[i] = When{Cond: castTo(w.Cond, boolType), Result: castTo(w.Result, t)}
	}
	return &Case{Whens: out, Else: castTo(els, t), T: t}, nil
}

// NewIn binds x [NOT] IN (list): x and the list are cast to their
// common type.
func NewIn(x Expr, list []Expr, not bool) (Expr, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("IN needs a list of values")
	}
	t := x.Type()
	for _, e := range list {
		c, ok := types.Common(t, e.Type())
		if !ok || c.Kind == types.Row {
			return nil, fmt.Errorf("cannot compare %s with %s in IN", x.Type().Plain().Nullable(), e.Type().Plain().Nullable())
		}
		t = c
	}
	t = t.Plain()
	out := make([]Expr, len(list))
	for i, e := range list {
		out[i] = castTo(e, t)
	}
	return &In{X: castTo(x, t), List: out, Not: not}, nil
}

// NewUDF binds a call of a scalar function registered from Go: the
// arguments are cast to f.Args.
func NewUDF(f *ScalarFunc, args []Expr) (Expr, error) {
	if len(args) != len(f.Args) {
		return nil, fmt.Errorf("%s takes %s, got %s", f.Name, typeList(f.Args), exprTypes(args))
	}
	out := make([]Expr, len(args))
	for i, a := range args {
		if !implicit(a.Type(), f.Args[i]) {
			return nil, fmt.Errorf("%s takes %s, got %s", f.Name, typeList(f.Args), exprTypes(args))
		}
		out[i] = castTo(a, f.Args[i])
	}
	return &UDF{Fn: f, Args: out}, nil
}

// implicit reports whether a value of type from is passed where to is
// declared without a written CAST: NULL anywhere, numbers to a wider
// number (INT < BIGINT < DECIMAL < DOUBLE), and a type to itself.
func implicit(from, to types.Type) bool {
	switch {
	case from.Kind == types.Null || from.Kind == to.Kind:
		return true
	case from.IsNumeric() && to.IsNumeric():
		return rank(from.Kind) <= rank(to.Kind)
	}
	return false
}

func rank(k types.Kind) int {
	switch k {
	case types.Int:
		return 1
	case types.BigInt:
		return 2
	case types.Decimal:
		return 3
	}
	return 4
}

func typeList(ts []types.Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.Plain().Nullable().String()
	}
	return "(" + strings.Join(s, ", ") + ")"
}

func exprTypes(es []Expr) string {
	ts := make([]types.Type, len(es))
	for i, e := range es {
		ts[i] = e.Type()
	}
	return typeList(ts)
}
