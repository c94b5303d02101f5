package parse

import (
	"github.com/weir-stream/weir/internal/sql/ast"
)

// from parses the FROM clause: table references joined by commas and
// JOINs, left to right (as in Flink, a comma joins like a JOIN).
func (p *parser) from() (ast.TableExpr, error) {
	left, err := p.tableRef()
	if err != nil {
		return nil, err
	}
	for {
		if p.accept(",") {
			right, err := p.tableRef()
			if err != nil {
				return nil, err
			}
			left = &ast.Join{Pos: left.Position(), Kind: ast.CommaJoin, L: left, R: right}
			continue
		}
		kind, written, ok, err := p.joinKind()
		if err != nil {
			return nil, err
		}
		if !ok {
			return left, nil
		}
		right, err := p.tableRef()
		if err != nil {
			return nil, err
		}
		j := &ast.Join{Pos: left.Position(), Kind: kind, Written: written, L: left, R: right}
		switch {
		case p.accept("ON"):
			if j.On, err = p.expr(); err != nil {
				return nil, err
			}
		case p.peek().is("USING"):
			p.next()
			if j.Using, err = p.identList("a column name", "USING columns"); err != nil {
				return nil, err
			}
		case kind != ast.CrossJoin:
			return nil, p.expected("ON or USING after the table joined by " + written)
		}
		left = j
	}
}

// joinKind parses the keywords of a join, if the next tokens are one.
// written is the kind as written, normalized to upper case and single
// spaces.
func (p *parser) joinKind() (kind ast.JoinKind, written string, ok bool, err error) {
	t := p.peek()
	words := func(ws ...string) string {
		s := ""
		for i, w := range ws {
			if i > 0 {
				s += " "
			}
			s += w
		}
		return s
	}
	switch {
	case p.accept("JOIN"):
		return ast.InnerJoin, "JOIN", true, nil
	case p.acceptSeq("INNER", "JOIN"):
		return ast.InnerJoin, "INNER JOIN", true, nil
	case p.acceptSeq("CROSS", "JOIN"):
		return ast.CrossJoin, "CROSS JOIN", true, nil
	case t.is("LEFT"), t.is("RIGHT"), t.is("FULL"):
		p.next()
		kind := map[string]ast.JoinKind{"LEFT": ast.LeftJoin, "RIGHT": ast.RightJoin, "FULL": ast.FullJoin}[t.upper]
		if p.accept("OUTER") {
			written = words(t.upper, "OUTER", "JOIN")
		} else {
			written = words(t.upper, "JOIN")
		}
		if p.peek().is("ANTI") || p.peek().is("SEMI") {
			return "", "", false, unsupported(p.peek(), t.upper+" "+p.peek().upper+" JOIN")
		}
		if _, err := p.expect("JOIN", "after "+t.upper); err != nil {
			return "", "", false, err
		}
		return kind, written, true, nil
	case t.is("NATURAL"):
		return "", "", false, unsupported(t, "NATURAL JOIN")
	case t.is("INNER"), t.is("CROSS"):
		p.next()
		if p.peek().is("APPLY") {
			return "", "", false, unsupported(t, t.upper+" APPLY")
		}
		_, err := p.expect("JOIN", "after "+t.upper)
		return "", "", false, err
	}
	return "", "", false, nil
}

// tableRef parses one item of FROM: a table name [FOR SYSTEM_TIME AS OF
// expr], a derived table (query), TABLE(function call), a parenthesized
// join, each with an optional alias.
func (p *parser) tableRef() (ast.TableExpr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	t := p.peek()
	lateral := p.accept("LATERAL")
	var ref ast.TableExpr
	var alias **ast.Alias
	switch n := p.peek(); {
	case n.is("(") && (startsQuery(p.peekAt(1)) || p.peekAt(1).is("(")):
		p.next()
		q, err := p.query()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(")", "after the subquery in FROM"); err != nil {
			return nil, err
		}
		d := &ast.DerivedTable{Pos: t.pos, Lateral: lateral, Query: q}
		ref, alias = d, &d.Alias
	case n.is("(") && !lateral:
		p.next()
		inner, err := p.from()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(")", "after the parenthesized join"); err != nil {
			return nil, err
		}
		return inner, nil
	case n.is("TABLE"):
		f, err := p.tableFunc(t.pos, lateral)
		if err != nil {
			return nil, err
		}
		ref, alias = f, &f.Alias
	case n.is("UNNEST"):
		return nil, unsupported(n, "UNNEST")
	case lateral:
		return nil, p.expected("'(' or TABLE after LATERAL")
	default:
		name, err := p.name("a table name")
		if err != nil {
			return nil, err
		}
		tn := &ast.TableName{Pos: t.pos, Name: name}
		if p.acceptSeq("FOR", "SYSTEM_TIME") {
			if !p.acceptSeq("AS", "OF") {
				return nil, p.expected("AS OF after FOR SYSTEM_TIME")
			}
			if tn.SystemTime, err = p.expr(); err != nil {
				return nil, err
			}
		}
		ref, alias = tn, &tn.Alias
	}
	a, err := p.alias()
	if err != nil {
		return nil, err
	}
	*alias = a
	if m := p.peek(); m.is("MATCH_RECOGNIZE") || m.is("TABLESAMPLE") {
		return nil, unsupported(m, m.upper)
	}
	return ref, nil
}

// tableFunc parses TABLE(call), such as TABLE(TUMBLE(TABLE bid,
// DESCRIPTOR(dateTime), INTERVAL '10' SECOND)).
func (p *parser) tableFunc(pos ast.Pos, lateral bool) (*ast.TableFunc, error) {
	p.next()
	if _, err := p.expect("(", "after TABLE in FROM (as in TABLE(TUMBLE(...)))"); err != nil {
		return nil, err
	}
	n := p.peek()
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	c, ok := e.(*ast.Call)
	if !ok || c.NoParens {
		return nil, errorAt(n, "expected a function call inside TABLE(...), found %s", e)
	}
	context := "to close TABLE( after the arguments of " + c.Name.String()
	if windowFunctions[normalize(c.Name)] {
		context = "to close TABLE( after the window's arguments"
	}
	if _, err := p.expect(")", context); err != nil {
		return nil, err
	}
	return &ast.TableFunc{Pos: pos, Lateral: lateral, Call: c}, nil
}

// windowFunctions are Flink's window table functions.
var windowFunctions = map[string]bool{"TUMBLE": true, "HOP": true, "CUMULATE": true, "SESSION": true}

// normalize returns a one-part unquoted name in upper case, or "".
func normalize(n ast.Name) string {
	if len(n) != 1 || n[0].Quoted {
		return ""
	}
	return upper(n[0].Name)
}

// alias parses an optional [AS] name [(cols)] after a table reference.
func (p *parser) alias() (*ast.Alias, error) {
	t := p.peek()
	var name ast.Ident
	var err error
	switch {
	case p.accept("AS"):
		if name, err = p.ident("an alias after AS"); err != nil {
			return nil, err
		}
	case isIdent(t):
		name, _ = p.ident("an alias")
	default:
		return nil, nil
	}
	a := &ast.Alias{Pos: t.pos, Name: name}
	if p.peek().is("(") {
		if a.Columns, err = p.identList("a column name", "column aliases of "+name.String()); err != nil {
			return nil, err
		}
	}
	return a, nil
}
