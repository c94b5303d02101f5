package ast

import "strings"

func (q *Query) String() string {
	var b strings.Builder
	if len(q.With) > 0 {
		b.WriteString("WITH ")
		for i, c := range q.With {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.String())
		}
		b.WriteString(" ")
	}
	b.WriteString(q.Body.String())
	if len(q.OrderBy) > 0 {
		b.WriteString(" ORDER BY " + orderList(q.OrderBy))
	}
	if q.Limit != nil {
		b.WriteString(" LIMIT " + q.Limit.String())
	}
	if q.Offset != nil {
		b.WriteString(" OFFSET " + q.Offset.String())
	}
	return b.String()
}

func (c CTE) String() string {
	s := c.Name.String()
	if len(c.Columns) > 0 {
		s += " (" + identList(c.Columns) + ")"
	}
	return s + " AS (" + c.Query.String() + ")"
}

func (s *Select) String() string {
	var b strings.Builder
	b.WriteString("SELECT ")
	if s.Distinct {
		b.WriteString("DISTINCT ")
	}
	for i, it := range s.Items {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(it.String())
	}
	if s.From != nil {
		b.WriteString(" FROM " + s.From.String())
	}
	if s.Where != nil {
		b.WriteString(" WHERE " + s.Where.String())
	}
	if len(s.GroupBy) > 0 {
		b.WriteString(" GROUP BY " + exprList(s.GroupBy))
	}
	if s.Having != nil {
		b.WriteString(" HAVING " + s.Having.String())
	}
	return b.String()
}

func (it SelectItem) String() string {
	if it.Alias == nil {
		return it.X.String()
	}
	return it.X.String() + " AS " + it.Alias.String()
}

func (s *SetOp) String() string {
	op := s.Op
	if s.All {
		op += " ALL"
	} else if s.Distinct {
		op += " DISTINCT"
	}
	l, r := s.L.String(), s.R.String()
	if left, ok := s.L.(*SetOp); ok && s.Op == "INTERSECT" && left.Op != "INTERSECT" {
		l = "(" + l + ")" // INTERSECT binds tighter than UNION and EXCEPT
	}
	if right, ok := s.R.(*SetOp); ok && (s.Op == "INTERSECT" || right.Op != "INTERSECT") {
		r = "(" + r + ")" // set operations of a level group to the left
	}
	return l + " " + op + " " + r
}

func (v *Values) String() string {
	rows := make([]string, len(v.Rows))
	for i, r := range v.Rows {
		rows[i] = "(" + exprList(r) + ")"
	}
	return "VALUES " + strings.Join(rows, ", ")
}

func (p *ParenQuery) String() string { return "(" + p.Query.String() + ")" }

func alias(a *Alias) string {
	if a == nil {
		return ""
	}
	return " " + a.String()
}

func (t *TableName) String() string {
	s := t.Name.String()
	if t.SystemTime != nil {
		s += " FOR SYSTEM_TIME AS OF " + t.SystemTime.String()
	}
	return s + alias(t.Alias)
}

func lateral(b bool) string {
	if b {
		return "LATERAL "
	}
	return ""
}

func (t *DerivedTable) String() string {
	return lateral(t.Lateral) + "(" + t.Query.String() + ")" + alias(t.Alias)
}

func (t *TableFunc) String() string {
	return lateral(t.Lateral) + "TABLE(" + t.Call.String() + ")" + alias(t.Alias)
}

func (j *Join) String() string {
	r := j.R.String()
	if _, ok := j.R.(*Join); ok {
		r = "(" + r + ")" // joins group to the left
	}
	var s string
	if j.Kind == CommaJoin {
		s = j.L.String() + ", " + r
	} else {
		written := j.Written
		if written == "" {
			written = string(j.Kind)
		}
		s = j.L.String() + " " + written + " " + r
	}
	if j.On != nil {
		s += " ON " + j.On.String()
	}
	if len(j.Using) > 0 {
		s += " USING (" + identList(j.Using) + ")"
	}
	return s
}
