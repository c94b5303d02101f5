package parse

import (
	"strings"

	"github.com/weir-stream/weir/internal/sql/ast"
)

// dataType parses a type: a name with optional numeric parameters
// (TIMESTAMP(3), DECIMAL(23, 3)), ROW<...> or ROW(...), ARRAY<T>,
// MULTISET<T>, MAP<K, V>, the multi-word names (DOUBLE PRECISION,
// CHARACTER VARYING, TIMESTAMP WITH LOCAL TIME ZONE), then NOT NULL or
// NULL. Names it does not know are kept as written: a planner checks
// them. what names the type in errors.
func (p *parser) dataType(what string) (*ast.DataType, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	t := p.peek()
	if t.is("INTERVAL") {
		return nil, unsupported(t, "the INTERVAL type")
	}
	if !isIdent(t) {
		return nil, p.expected(what)
	}
	p.next()
	d := &ast.DataType{Pos: t.pos, Name: t.upper}
	if t.kind == tokQuoted {
		d.Name = t.text
	}
	var err error
	switch {
	case t.is("ROW"):
		err = p.rowType(d)
	case t.is("ARRAY"), t.is("MULTISET"):
		err = p.elemType(d)
	case t.is("MAP"):
		err = p.mapType(d)
	default:
		p.multiWordName(d)
		if p.peek().is("(") {
			err = p.typeParams(d)
		}
	}
	if err != nil {
		return nil, err
	}
	for _, suffix := range [][]string{
		{"WITH", "LOCAL", "TIME", "ZONE"}, {"WITH", "TIME", "ZONE"}, {"WITHOUT", "TIME", "ZONE"},
	} {
		if p.acceptSeq(suffix...) {
			d.Suffix = strings.Join(suffix, " ")
			break
		}
	}
	if p.acceptSeq("NOT", "NULL") {
		d.NotNull = true
	} else if p.accept("NULL") {
		d.Null = true
	}
	return d, nil
}

// multiWordName extends DOUBLE to DOUBLE PRECISION and CHARACTER or
// CHAR to CHARACTER VARYING.
func (p *parser) multiWordName(d *ast.DataType) {
	switch {
	case d.Name == "DOUBLE" && p.accept("PRECISION"):
		d.Name = "DOUBLE PRECISION"
	case (d.Name == "CHARACTER" || d.Name == "CHAR") && p.accept("VARYING"):
		d.Name += " VARYING"
	}
}

// typeParams parses (n [, n]) after a type name.
func (p *parser) typeParams(d *ast.DataType) error {
	p.next()
	for {
		n := p.peek()
		if n.kind != tokNumber || strings.ContainsAny(n.text, ".eE") {
			return p.expected("an integer parameter of " + d.Name)
		}
		p.next()
		d.Params = append(d.Params, n.text)
		if !p.accept(",") {
			break
		}
	}
	_, err := p.expect(")", "after the parameters of "+d.Name)
	return err
}

// rowType parses the fields of ROW<name type, ...> or ROW(name type,
// ...), each with an optional description in quotes.
func (p *parser) rowType(d *ast.DataType) error {
	closing := ">"
	switch {
	case p.accept("<>"):
		d.Angle = true
		d.Fields = []ast.Field{}
		return nil
	case p.accept("<"):
		d.Angle = true
	case p.accept("("):
		closing = ")"
	default:
		return p.expected("'<' or '(' after ROW")
	}
	d.Fields = []ast.Field{}
	if p.accept(closing) {
		return nil
	}
	for {
		name, err := p.ident("a field name of ROW")
		if err != nil {
			return err
		}
		f := ast.Field{Pos: name.Pos, Name: name}
		if f.Type, err = p.dataType("a type for the field " + name.String()); err != nil {
			return err
		}
		if p.peek().kind == tokString {
			c := p.next().text
			f.Comment = &c
		}
		d.Fields = append(d.Fields, f)
		if p.accept(closing) {
			return nil
		}
		if !p.accept(",") {
			return p.expected("',' or '" + closing + "' after the field " + name.String() + " of ROW")
		}
	}
}

// elemType parses <T> after ARRAY or MULTISET.
func (p *parser) elemType(d *ast.DataType) error {
	if _, err := p.expect("<", "after "+d.Name); err != nil {
		return err
	}
	var err error
	if d.Elem, err = p.dataType("the element type of " + d.Name); err != nil {
		return err
	}
	_, err = p.expect(">", "after the element type of "+d.Name)
	return err
}

// mapType parses <K, V> after MAP.
func (p *parser) mapType(d *ast.DataType) error {
	if _, err := p.expect("<", "after MAP"); err != nil {
		return err
	}
	var err error
	if d.Key, err = p.dataType("the key type of MAP"); err != nil {
		return err
	}
	if _, err := p.expect(",", "after the key type of MAP"); err != nil {
		return err
	}
	if d.Value, err = p.dataType("the value type of MAP"); err != nil {
		return err
	}
	_, err = p.expect(">", "after the value type of MAP")
	return err
}
