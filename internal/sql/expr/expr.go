// Package expr is the SQL layer's scalar expressions after binding: a
// tree whose every node has a type (package types), built by the
// planner with the constructors of this package, which check the
// arguments, resolve overloads and insert the implicit casts; and
// compiled once into a Go closure that evaluates it on a row's values.
package expr

import (
	"github.com/weir-stream/weir/internal/sql/funcs"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// Expr is a bound scalar expression.
type Expr interface {
	// Type is the type of the expression's values.
	Type() types.Type
	// String renders the expression for plans and errors, with columns
	// by name.
	String() string
}

// Col reads column Index of the row the expression is evaluated on.
type Col struct {
	Index int
	Name  string
	T     types.Type
}

// Lit is a constant. V is in the run-time form of T (a DECIMAL's
// unscaled value at T's scale, an INTERVAL in milliseconds).
type Lit struct {
	V row.Value
	T types.Type
}

// Call is a call of a built-in function of package funcs, with the
// overload chosen (Sig indexes Fn.Signatures) and the arguments cast to
// its argument types.
type Call struct {
	Fn   *funcs.Function
	Sig  int
	Args []Expr
	T    types.Type
}

// Op is an operator: arithmetic (+ - * / %), comparison (= <> < <= >
// >=, IS DISTINCT FROM, IS NOT DISTINCT FROM), logic (AND OR NOT),
// negation (NEG), string concatenation (||), and the tests IS NULL, IS
// NOT NULL, IS TRUE, IS NOT TRUE, IS FALSE, IS NOT FALSE. The arguments
// of arithmetic and comparison have been cast to a common type (a
// timestamp and an interval keep theirs).
type Op struct {
	Op   string
	Args []Expr
	T    types.Type
}

// Case is a searched CASE; a simple CASE is bound as one. Else is a
// NULL literal when not written. Results are cast to T.
type Case struct {
	Whens []When
	Else  Expr
	T     types.Type
}

// When is one WHEN cond THEN result.
type When struct{ Cond, Result Expr }

// Cast converts X to T; a TRY_CAST (Try) gives NULL where a CAST fails
// the query.
type Cast struct {
	X   Expr
	T   types.Type
	Try bool
}

// In is X [NOT] IN (List), the list cast to X's type (or both to their
// common type).
type In struct {
	X    Expr
	List []Expr
	Not  bool
}

// UDF is a call of a scalar function registered from Go.
type UDF struct {
	Fn   *ScalarFunc
	Args []Expr
}

// ScalarFunc is a scalar function registered from Go: fixed argument
// types (arguments are cast to them), a result type, and the function
// on run-time values. Eval is called with NULL arguments too unless
// Strict is set, in which case a NULL argument gives NULL without a
// call.
type ScalarFunc struct {
	Name   string
	Args   []types.Type
	Result types.Type
	Strict bool
	Eval   func(args []row.Value) (row.Value, error)
}

func (e *Col) Type() types.Type  { return e.T }
func (e *Lit) Type() types.Type  { return e.T }
func (e *Call) Type() types.Type { return e.T }
func (e *Op) Type() types.Type   { return e.T }
func (e *Case) Type() types.Type { return e.T }
func (e *Cast) Type() types.Type { return e.T }
func (e *In) Type() types.Type {
	return types.Type{Kind: types.Boolean}
}
func (e *UDF) Type() types.Type { return e.Fn.Result }

// ProcTime is PROCTIME(): the processing time at which a row is
// projected, a TIMESTAMP(3) processing-time attribute. Its value comes
// from the clock, which this package never reads: Compile refuses it,
// and the operator that projects a ProcTime column fills it in itself.
type ProcTime struct{}

func (*ProcTime) Type() types.Type {
	return types.Type{Kind: types.Timestamp, Precision: 3, NotNull: true, Time: types.ProcTime}
}

func (*ProcTime) String() string { return "PROCTIME()" }

// Children returns the operands of e, in evaluation order (a CASE's
// conditions and results pairwise, then its ELSE); none for a column, a
// literal or PROCTIME().
func Children(e Expr) []Expr {
	switch e := e.(type) {
	case *Cast:
		return []Expr{e.X}
	case *Op:
		return e.Args
	case *Call:
		return e.Args
	case *UDF:
		return e.Args
	case *Case:
		var out []Expr
		for _, w := range e.Whens {
			out = append(out, w.Cond, w.Result)
		}
		if e.Else != nil {
			out = append(out, e.Else)
		}
		return out
	case *In:
		return append([]Expr{e.X}, e.List...)
	}
	return nil
}

// PassesThrough reports whether proj is every column of rows of width n,
// in order: a projection that changes nothing.
func PassesThrough(proj []Expr, n int) bool {
	if len(proj) != n {
		return false
	}
	for i, e := range proj {
		if c, ok := e.(*Col); !ok || c.Index != i {
			return false
		}
	}
	return true
}
