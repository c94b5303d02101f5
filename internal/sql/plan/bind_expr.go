package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weir-stream/weir/internal/sql/ast"
	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/types"
)

// binder binds expressions over a scope. hook, when set, sees every
// expression first and may bind it itself (aggregates, window
// functions, group keys).
type binder struct {
	cat   *Catalog
	scope *scope
	hook  func(ast.Expr) (expr.Expr, bool, error)
	// ctes are the WITH queries visible here.
	ctes map[string]*View
}

// scalar binds e over b's scope.
func (b *binder) scalar(e ast.Expr) (expr.Expr, error) {
	if b.hook != nil {
		out, ok, err := b.hook(e)
		if err != nil || ok {
			return out, err
		}
	}
	out, err := b.bind(e)
	if err != nil {
		return nil, wrapAt(e.Position(), err)
	}
	return out, nil
}

func (b *binder) all(es []ast.Expr) ([]expr.Expr, error) {
	out := make([]expr.Expr, len(es))
	for i, e := range es {
		x, err := b.scalar(e)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func (b *binder) bind(e ast.Expr) (expr.Expr, error) {
	switch e := e.(type) {
	case *ast.Literal:
		return literal(e)
	case *ast.Interval:
		ms, err := intervalMillis(e)
		if err != nil {
			return nil, err
		}
		return expr.IntervalLit(ms), nil
	case *ast.Ref:
		if b.scope == nil {
			return nil, errorAt(e.Pos, "column %s: no columns here", joinName(e.Name))
		}
		return b.scope.resolve(e)
	case *ast.Unary:
		x, err := b.scalar(e.X)
		if err != nil {
			return nil, err
		}
		switch e.Op {
		case "+":
			return x, nil
		case "-":
			return expr.NewOp("NEG", x)
		}
		return expr.NewOp("NOT", x)
	case *ast.Binary:
		l, err := b.scalar(e.L)
		if err != nil {
			return nil, err
		}
		r, err := b.scalar(e.R)
		if err != nil {
			return nil, err
		}
		op := e.Op
		if op == "!=" {
			op = "<>"
		}
		return expr.NewOp(op, l, r)
	case *ast.Is:
		x, err := b.scalar(e.X)
		if err != nil {
			return nil, err
		}
		op := "IS "
		if e.Not {
			op += "NOT "
		}
		what := e.What
		if what == "UNKNOWN" {
			what = "NULL"
		}
		return expr.NewOp(op+what, x)
	case *ast.Between:
		x, err := b.scalar(e.X)
		if err != nil {
			return nil, err
		}
		lo, err := b.scalar(e.Lo)
		if err != nil {
			return nil, err
		}
		hi, err := b.scalar(e.Hi)
		if err != nil {
			return nil, err
		}
		ge, err := expr.NewOp(">=", x, lo)
		if err != nil {
			return nil, err
		}
		le, err := expr.NewOp("<=", x, hi)
		if err != nil {
			return nil, err
		}
		and, err := expr.NewOp("AND", ge, le)
		if err != nil || !e.Not {
			return and, err
		}
		return expr.NewOp("NOT", and)
	case *ast.In:
		if e.Query != nil {
			return nil, unsupportedAt(e.Pos, "IN (subquery) is not supported: write a join")
		}
		x, err := b.scalar(e.X)
		if err != nil {
			return nil, err
		}
		list, err := b.all(e.List)
		if err != nil {
			return nil, err
		}
		return expr.NewIn(x, list, e.Not)
	case *ast.Like:
		args := []ast.Expr{e.X, e.Pattern}
		if e.Escape != nil {
			args = append(args, e.Escape)
		}
		xs, err := b.all(args)
		if err != nil {
			return nil, err
		}
		like, err := expr.NewCall("LIKE", xs)
		if err != nil || !e.Not {
			return like, err
		}
		return expr.NewOp("NOT", like)
	case *ast.Cast:
		x, err := b.scalar(e.X)
		if err != nil {
			return nil, err
		}
		t, err := types.FromAST(e.Type)
		if err != nil {
			return nil, err
		}
		return expr.NewCast(x, t, e.Try)
	case *ast.Extract:
		x, err := b.scalar(e.X)
		if err != nil {
			return nil, err
		}
		return expr.NewCall("EXTRACT", []expr.Expr{expr.StringLit(e.Unit), x})
	case *ast.Case:
		return b.caseExpr(e)
	case *ast.Call:
		return b.call(e)
	case *ast.Subquery, *ast.Exists:
		return nil, unsupportedAt(e.Position(), "subqueries in expressions are not supported: write a join")
	case *ast.Constructor:
		return nil, unsupportedAt(e.Pos, e.Kind+" constructors are not supported")
	case *ast.Index:
		return nil, unsupportedAt(e.Pos, "ARRAY and MAP element access is not supported")
	case *ast.Star:
		return nil, errorAt(e.Pos, "* is allowed only in a select list or COUNT(*)")
	}
	return nil, unsupportedAt(e.Position(), fmt.Sprintf("the expression %T is not supported", e))
}

func (b *binder) caseExpr(e *ast.Case) (expr.Expr, error) {
	var operand expr.Expr
	if e.Operand != nil {
		x, err := b.scalar(e.Operand)
		if err != nil {
			return nil, err
		}
		operand = x
	}
	var whens []expr.When
	for _, w := range e.Whens {
		cond, err := b.scalar(w.Cond)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			if cond, err = expr.NewOp("=", operand, cond); err != nil {
				return nil, wrapAt(w.Pos, err)
			}
		}
		res, err := b.scalar(w.Result)
		if err != nil {
			return nil, err
		}
		whens = append(whens, expr.When{Cond: cond, Result: res})
	}
	var els expr.Expr
	if e.Else != nil {
		x, err := b.scalar(e.Else)
		if err != nil {
			return nil, err
		}
		els = x
	}
	return expr.NewCase(whens, els)
}

// call binds a function call that is not an aggregate or a window
// function (the hook binds those where they are allowed).
func (b *binder) call(e *ast.Call) (expr.Expr, error) {
	name := strings.ToUpper(joinName(e.Name))
	if e.Over != nil {
		return nil, errorAt(e.Pos, "%s OVER (...) is allowed only as ROW_NUMBER() in a select list", name)
	}
	if b.cat != nil && b.cat.Aggregates != nil {
		if _, ok, _ := b.cat.Aggregates(name, false, types.BigIntType); ok || e.Star {
			return nil, errorAt(e.Pos, "aggregate %s is not allowed here (only in the select list or HAVING of a query)", name)
		}
	}
	if name == "PROCTIME" {
		if len(e.Args) > 0 {
			return nil, errorAt(e.Pos, "PROCTIME() takes no arguments")
		}
		return &expr.ProcTime{}, nil
	}
	switch name {
	case "NOW", "CURRENT_TIMESTAMP", "LOCALTIMESTAMP", "CURRENT_DATE", "RAND", "UUID":
		return nil, unsupportedAt(e.Pos, name+"() is not supported: its value depends on when a row is processed, so a replay would not reproduce it")
	}
	args, err := b.all(e.Args)
	if err != nil {
		return nil, err
	}
	if b.cat != nil {
		if f, ok := b.cat.function(name); ok {
			return expr.NewUDF(f, args)
		}
	}
	return expr.NewCall(name, args)
}

func literal(e *ast.Literal) (expr.Expr, error) {
	switch e.Kind {
	case ast.LitNumber:
		l, err := expr.NumberLit(e.Text)
		if err != nil {
			return nil, err
		}
		return l, nil
	case ast.LitString:
		return expr.StringLit(e.Text), nil
	case ast.LitBool:
		return expr.BoolLit(strings.EqualFold(e.Text, "TRUE")), nil
	case ast.LitNull:
		return expr.NullLit(), nil
	case ast.LitTimestamp:
		l, err := expr.TimestampLit(e.Text)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
	return nil, unsupportedAt(e.Pos, "DATE and TIME literals are not supported; use TIMESTAMP '...'")
}

var unitMillis = map[string]int64{
	"MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000,
}

// intervalMillis reads a day-time interval literal: INTERVAL '10'
// SECOND, INTERVAL '1.5' SECOND, INTERVAL '1:30' MINUTE TO SECOND.
func intervalMillis(iv *ast.Interval) (int64, error) {
	unit := strings.TrimSuffix(iv.Unit, "S")
	ms, ok := unitMillis[unit]
	if !ok {
		return 0, unsupportedAt(iv.Pos, "INTERVAL ... "+iv.Unit+" is not supported; use MILLISECOND, SECOND, MINUTE, HOUR or DAY")
	}
	var total float64
	if iv.ToUnit != "" {
		to, ok := unitMillis[strings.TrimSuffix(iv.ToUnit, "S")]
		if !ok {
			return 0, unsupportedAt(iv.Pos, "INTERVAL ... TO "+iv.ToUnit+" is not supported")
		}
		// Parts separated by ':' or ' ' from the leading unit down to
		// the trailing one.
		fields := strings.FieldsFunc(iv.Value, func(r rune) bool { return r == ':' || r == ' ' })
		units := []int64{86_400_000, 3_600_000, 60_000, 1000}
		i := 0
		for i < len(units) && units[i] != ms {
			i++
		}
		for j, f := range fields {
			if i+j >= len(units) || units[i+j] < to {
				return 0, errorAt(iv.Pos, "INTERVAL '%s' %s TO %s: too many fields", iv.Value, iv.Unit, iv.ToUnit)
			}
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return 0, errorAt(iv.Pos, "INTERVAL '%s': %q is not a number", iv.Value, f)
			}
			total += v * float64(units[i+j])
		}
	} else {
		v, err := strconv.ParseFloat(strings.TrimSpace(iv.Value), 64)
		if err != nil {
			return 0, errorAt(iv.Pos, "INTERVAL '%s' %s: not a number", iv.Value, iv.Unit)
		}
		total = v * float64(ms)
	}
	if iv.Negative {
		total = -total
	}
	return int64(total), nil
}
