package ast

import "strings"

// plain reports whether s lexes as one word, as the parser's lexer
// sees words: a letter, "_" or non-ASCII byte, then those, digits or "$".
func plain(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '$')) {
			return false
		}
	}
	return true
}

func (id Ident) String() string {
	if id.Quoted || !plain(id.Name) || Reserved(id.Name) {
		return "`" + strings.ReplaceAll(id.Name, "`", "``") + "`"
	}
	return id.Name
}

func (n Name) String() string {
	parts := make([]string, len(n))
	for i, id := range n {
		parts[i] = id.String()
	}
	return strings.Join(parts, ".")
}

// QuoteString returns s as an SQL string literal, quotes doubled.
func QuoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func identList(ids []Ident) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id.String()
	}
	return strings.Join(parts, ", ")
}

func exprList(es []Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return strings.Join(parts, ", ")
}

// operand prints e, in parentheses if it binds less tightly than min.
func operand(e Expr, min int) string {
	if precedence(e) < min {
		return "(" + e.String() + ")"
	}
	return e.String()
}

func (a *Alias) String() string {
	s := "AS " + a.Name.String()
	if len(a.Columns) > 0 {
		s += " (" + identList(a.Columns) + ")"
	}
	return s
}

func (e *Literal) String() string {
	switch e.Kind {
	case LitString:
		return QuoteString(e.Text)
	case LitTimestamp:
		return "TIMESTAMP " + QuoteString(e.Text)
	case LitDate:
		return "DATE " + QuoteString(e.Text)
	case LitTime:
		return "TIME " + QuoteString(e.Text)
	}
	return e.Text
}

func (e *Interval) String() string {
	s := "INTERVAL "
	if e.Negative {
		s += "-"
	}
	s += QuoteString(e.Value) + " " + e.Unit
	if e.ToUnit != "" {
		s += " TO " + e.ToUnit
	}
	return s
}

func (e *Ref) String() string { return e.Name.String() }

func (e *Star) String() string {
	if len(e.Qualifier) == 0 {
		return "*"
	}
	return e.Qualifier.String() + ".*"
}

func (e *Unary) String() string {
	if e.Op == "NOT" {
		return "NOT " + operand(e.X, PrecNot)
	}
	x := operand(e.X, PrecUnary)
	if strings.HasPrefix(x, e.Op) || strings.HasPrefix(x, "-") {
		return e.Op + " " + x // "- -x", never the comment "--x"
	}
	return e.Op + x
}

func (e *Binary) String() string {
	p := BinaryPrecedence(e.Op)
	return operand(e.L, p) + " " + e.Op + " " + operand(e.R, p+1)
}

func (e *Is) String() string {
	s := operand(e.X, PrecIs) + " IS "
	if e.Not {
		s += "NOT "
	}
	return s + e.What
}

func not(b bool) string {
	if b {
		return "NOT "
	}
	return ""
}

func (e *Between) String() string {
	return operand(e.X, PrecPredicate) + " " + not(e.Not) + "BETWEEN " +
		operand(e.Lo, PrecPredicate+1) + " AND " + operand(e.Hi, PrecPredicate+1)
}

func (e *In) String() string {
	s := operand(e.X, PrecPredicate) + " " + not(e.Not) + "IN ("
	if e.Query != nil {
		return s + e.Query.String() + ")"
	}
	return s + exprList(e.List) + ")"
}

func (e *Like) String() string {
	s := operand(e.X, PrecPredicate) + " " + not(e.Not) + "LIKE " + operand(e.Pattern, PrecPredicate+1)
	if e.Escape != nil {
		s += " ESCAPE " + operand(e.Escape, PrecPredicate+1)
	}
	return s
}

func (e *Exists) String() string   { return "EXISTS (" + e.Query.String() + ")" }
func (e *Subquery) String() string { return "(" + e.Query.String() + ")" }

func (e *Call) String() string {
	name := e.Name.String()
	if len(e.Name) == 1 && !e.Name[0].Quoted && plain(e.Name[0].Name) {
		name = e.Name[0].Name // reserved words that are functions: LEFT(s, 3)
	}
	if e.NoParens {
		return name
	}
	var b strings.Builder
	b.WriteString(name)
	b.WriteString("(")
	if e.Distinct {
		b.WriteString("DISTINCT ")
	}
	if e.Star {
		b.WriteString("*")
	}
	b.WriteString(exprList(e.Args))
	b.WriteString(")")
	if e.Filter != nil {
		b.WriteString(" FILTER (WHERE " + e.Filter.String() + ")")
	}
	if e.Over != nil {
		b.WriteString(" OVER " + e.Over.String())
	}
	return b.String()
}

func (e *NamedArg) String() string { return e.Name.String() + " => " + e.Value.String() }

func (e *TableArg) String() string {
	s := "TABLE " + e.Name.String()
	switch len(e.PartitionBy) {
	case 0:
	case 1:
		s += " PARTITION BY " + e.PartitionBy[0].String()
	default:
		s += " PARTITION BY (" + exprList(e.PartitionBy) + ")"
	}
	return s
}

func (e *Descriptor) String() string { return "DESCRIPTOR(" + identList(e.Columns) + ")" }

func (e *Cast) String() string {
	name := "CAST"
	if e.Try {
		name = "TRY_CAST"
	}
	return name + "(" + e.X.String() + " AS " + e.Type.String() + ")"
}

func (e *Extract) String() string { return "EXTRACT(" + e.Unit + " FROM " + e.X.String() + ")" }

func (e *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	if e.Operand != nil {
		b.WriteString(" " + e.Operand.String())
	}
	for _, w := range e.Whens {
		b.WriteString(" WHEN " + w.Cond.String() + " THEN " + w.Result.String())
	}
	if e.Else != nil {
		b.WriteString(" ELSE " + e.Else.String())
	}
	b.WriteString(" END")
	return b.String()
}

func (w When) String() string { return "WHEN " + w.Cond.String() + " THEN " + w.Result.String() }

func (e *Constructor) String() string {
	if e.Kind == "ROW" {
		return "ROW(" + exprList(e.Elems) + ")"
	}
	return e.Kind + "[" + exprList(e.Elems) + "]"
}

func (e *Index) String() string {
	return operand(e.X, PrecPrimary) + "[" + e.Index.String() + "]"
}

func (w *Window) String() string {
	if w.Ref != nil {
		return w.Ref.String()
	}
	var parts []string
	if len(w.PartitionBy) > 0 {
		parts = append(parts, "PARTITION BY "+exprList(w.PartitionBy))
	}
	if len(w.OrderBy) > 0 {
		parts = append(parts, "ORDER BY "+orderList(w.OrderBy))
	}
	if w.Frame != nil {
		parts = append(parts, w.Frame.String())
	}
	return "(" + strings.Join(parts, " ") + ")"
}

func (f *Frame) String() string {
	if f.End == nil {
		return f.Unit + " " + f.Start.String()
	}
	return f.Unit + " BETWEEN " + f.Start.String() + " AND " + f.End.String()
}

func (b Bound) String() string {
	switch b.Kind {
	case UnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case Preceding:
		return operand(b.Offset, PrecPredicate+1) + " PRECEDING"
	case CurrentRow:
		return "CURRENT ROW"
	case Following:
		return operand(b.Offset, PrecPredicate+1) + " FOLLOWING"
	case UnboundedFollowing:
		return "UNBOUNDED FOLLOWING"
	}
	return "?"
}

func (o OrderItem) String() string {
	s := o.X.String()
	if o.Desc {
		s += " DESC"
	} else if o.Asc {
		s += " ASC"
	}
	if o.Nulls != "" {
		s += " NULLS " + o.Nulls
	}
	return s
}

func orderList(items []OrderItem) string {
	parts := make([]string, len(items))
	for i, o := range items {
		parts[i] = o.String()
	}
	return strings.Join(parts, ", ")
}
