package expr

import (
	"strings"

	"github.com/weir-stream/weir/internal/sql/funcs"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// The String methods render a bound expression for EXPLAIN and errors:
// columns by name, implicit casts as CAST, operators with parentheses
// around every operation so the tree is unambiguous.

func (e *Col) String() string { return e.Name }

func (e *Lit) String() string { return valueText(e.V, e.T) }

// valueText renders v, a value of type t, as SQL writes the literal.
func valueText(v row.Value, t types.Type) string {
	if v.IsNull() {
		return "NULL"
	}
	switch t.Kind {
	case types.Varchar:
		return "'" + strings.ReplaceAll(v.S, "'", "''") + "'"
	case types.Decimal:
		return funcs.NewDecimal(v.I, t.Scale).String()
	case types.Double:
		return funcs.Float64ToString(v.Float())
	case types.Timestamp:
		return "TIMESTAMP '" + funcs.FormatTimestamp(funcs.TimestampFromMillis(v.I)) + "'"
	case types.Interval:
		return "INTERVAL '" + funcs.NewDecimal(v.I, 3).String() + "' SECOND"
	}
	return v.Text()
}

func (e *Call) String() string {
	return e.Fn.Name + "(" + joinExprs(e.Args) + ")"
}

func (e *UDF) String() string { return e.Fn.Name + "(" + joinExprs(e.Args) + ")" }

func (e *Op) String() string {
	switch e.Op {
	case "NOT":
		return "(NOT " + e.Args[0].String() + ")"
	case "NEG":
		return "(- " + e.Args[0].String() + ")"
	}
	if len(e.Args) == 1 {
		return "(" + e.Args[0].String() + " " + e.Op + ")"
	}
	return "(" + e.Args[0].String() + " " + e.Op + " " + e.Args[1].String() + ")"
}

func (e *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, w := range e.Whens {
		b.WriteString(" WHEN " + w.Cond.String() + " THEN " + w.Result.String())
	}
	b.WriteString(" ELSE " + e.Else.String() + " END")
	return b.String()
}

func (e *Cast) String() string {
	name := "CAST"
	if e.Try {
		name = "TRY_CAST"
	}
	return name + "(" + e.X.String() + " AS " + e.T.Nullable().String() + ")"
}

func (e *In) String() string {
	not := ""
	if e.Not {
		not = " NOT"
	}
	return "(" + e.X.String() + not + " IN (" + joinExprs(e.List) + "))"
}

func joinExprs(es []Expr) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.String()
	}
	return strings.Join(s, ", ")
}
