package ast

import "strings"

// multiWordTypes are the type names of more than one word.
var multiWordTypes = map[string]bool{"DOUBLE PRECISION": true, "CHARACTER VARYING": true, "CHAR VARYING": true}

func (t *DataType) String() string {
	var b strings.Builder
	if plain(t.Name) && t.Name == strings.ToUpper(t.Name) && !Reserved(t.Name) ||
		multiWordTypes[t.Name] {
		b.WriteString(t.Name)
	} else {
		b.WriteString(Ident{Name: t.Name, Quoted: true}.String())
	}
	switch {
	case t.Key != nil:
		b.WriteString("<" + t.Key.String() + ", " + t.Value.String() + ">")
	case t.Elem != nil:
		b.WriteString("<" + t.Elem.String() + ">")
	case t.Fields != nil:
		fields := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			fields[i] = f.String()
		}
		if t.Angle {
			b.WriteString("<" + strings.Join(fields, ", ") + ">")
		} else {
			b.WriteString("(" + strings.Join(fields, ", ") + ")")
		}
	case len(t.Params) > 0:
		b.WriteString("(" + strings.Join(t.Params, ", ") + ")")
	}
	if t.Suffix != "" {
		b.WriteString(" " + t.Suffix)
	}
	if t.NotNull {
		b.WriteString(" NOT NULL")
	} else if t.Null {
		b.WriteString(" NULL")
	}
	return b.String()
}

func (f Field) String() string {
	s := f.Name.String() + " " + f.Type.String()
	if f.Comment != nil {
		s += " " + QuoteString(*f.Comment)
	}
	return s
}

func (c Column) String() string {
	s := c.Name.String()
	switch c.Kind {
	case Computed:
		s += " AS " + c.Expr.String()
	case Metadata:
		s += " " + c.Type.String() + " METADATA"
		if c.MetadataKey != nil {
			s += " FROM " + QuoteString(*c.MetadataKey)
		}
		if c.Virtual {
			s += " VIRTUAL"
		}
	default:
		s += " " + c.Type.String()
	}
	if c.PrimaryKey {
		s += " PRIMARY KEY NOT ENFORCED"
	}
	if c.Comment != nil {
		s += " COMMENT " + QuoteString(*c.Comment)
	}
	return s
}

func (w Watermark) String() string {
	return "WATERMARK FOR " + w.Column.String() + " AS " + w.Expr.String()
}

func (k *PrimaryKey) String() string {
	s := ""
	if k.Constraint != nil {
		s = "CONSTRAINT " + k.Constraint.String() + " "
	}
	return s + "PRIMARY KEY (" + identList(k.Columns) + ") NOT ENFORCED"
}

func (o Option) String() string { return QuoteString(o.Key) + " = " + QuoteString(o.Value) }

func options(opts []Option) string {
	parts := make([]string, len(opts))
	for i, o := range opts {
		parts[i] = o.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func create(temporary, system bool, what string, ifNotExists bool, name Name) string {
	s := "CREATE "
	if temporary {
		s += "TEMPORARY "
	}
	if system {
		s += "SYSTEM "
	}
	s += what + " "
	if ifNotExists {
		s += "IF NOT EXISTS "
	}
	return s + name.String()
}

func (s *CreateTable) String() string {
	var b strings.Builder
	b.WriteString(create(s.Temporary, false, "TABLE", s.IfNotExists, s.Name))
	var elems []string
	for _, c := range s.Columns {
		elems = append(elems, c.String())
	}
	for _, w := range s.Watermarks {
		elems = append(elems, w.String())
	}
	if s.PrimaryKey != nil {
		elems = append(elems, s.PrimaryKey.String())
	}
	if len(elems) > 0 {
		b.WriteString(" (" + strings.Join(elems, ", ") + ")")
	}
	if s.Comment != nil {
		b.WriteString(" COMMENT " + QuoteString(*s.Comment))
	}
	if len(s.PartitionBy) > 0 {
		b.WriteString(" PARTITIONED BY (" + identList(s.PartitionBy) + ")")
	}
	if s.Options != nil {
		b.WriteString(" WITH " + options(s.Options))
	}
	if s.As != nil {
		b.WriteString(" AS " + s.As.String())
	}
	return b.String()
}

func (s *CreateView) String() string {
	v := create(s.Temporary, false, "VIEW", s.IfNotExists, s.Name)
	if len(s.Columns) > 0 {
		v += " (" + identList(s.Columns) + ")"
	}
	return v + " AS " + s.Query.String()
}

func (s *CreateFunction) String() string {
	f := create(s.Temporary, s.System, "FUNCTION", s.IfNotExists, s.Name) + " AS " + QuoteString(s.Class)
	if s.Language != "" {
		f += " LANGUAGE " + s.Language
	}
	return f
}

func (s *Insert) String() string {
	v := "INSERT INTO "
	if s.Overwrite {
		v = "INSERT OVERWRITE "
	}
	v += s.Table.String()
	if len(s.Columns) > 0 {
		v += " (" + identList(s.Columns) + ")"
	}
	return v + " " + s.Query.String()
}

func (s *QueryStmt) String() string { return s.Query.String() }

func (s *Set) String() string {
	if s.Option == nil {
		return "SET"
	}
	return "SET " + s.Option.String()
}

func (s *Reset) String() string {
	if s.Key == nil {
		return "RESET"
	}
	return "RESET " + QuoteString(*s.Key)
}

func (s *Explain) String() string {
	v := "EXPLAIN "
	if s.PlanFor {
		v += "PLAN FOR "
	} else if len(s.Details) > 0 {
		v += strings.Join(s.Details, ", ") + " "
	}
	return v + s.Stmt.String()
}

// Script prints statements as a script, each ended by ";" and a newline.
func Script(stmts []Stmt) string {
	var b strings.Builder
	for _, s := range stmts {
		b.WriteString(s.String())
		b.WriteString(";\n")
	}
	return b.String()
}
