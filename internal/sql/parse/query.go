package parse

import (
	"github.com/weir-stream/weir/internal/sql/ast"
)

// query parses [WITH ...] body [ORDER BY ...] [LIMIT n] [OFFSET n].
func (p *parser) query() (*ast.Query, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	q := &ast.Query{Pos: p.peek().pos}
	var err error
	if p.accept("WITH") {
		if p.peek().is("RECURSIVE") {
			return nil, unsupported(p.peek(), "WITH RECURSIVE")
		}
		for {
			c, err := p.cte()
			if err != nil {
				return nil, err
			}
			q.With = append(q.With, c)
			if !p.accept(",") {
				break
			}
		}
	}
	if q.Body, err = p.setExpr(); err != nil {
		return nil, err
	}
	if p.acceptSeq("ORDER", "BY") {
		if q.OrderBy, err = p.orderList(); err != nil {
			return nil, err
		}
	}
	if p.accept("LIMIT") {
		if q.Limit, err = p.expr(); err != nil {
			return nil, err
		}
	}
	if p.accept("OFFSET") {
		if q.Offset, err = p.expr(); err != nil {
			return nil, err
		}
		if !p.accept("ROWS") {
			p.accept("ROW")
		}
	}
	if p.peek().is("FETCH") {
		return nil, unsupported(p.peek(), "FETCH FIRST; use LIMIT")
	}
	return q, nil
}

// cte parses name [(cols)] AS (query).
func (p *parser) cte() (ast.CTE, error) {
	name, err := p.ident("the name of a WITH query")
	if err != nil {
		return ast.CTE{}, err
	}
	c := ast.CTE{Pos: name.Pos, Name: name}
	if p.peek().is("(") {
		if c.Columns, err = p.identList("a column name", "column names of "+name.String()); err != nil {
			return ast.CTE{}, err
		}
	}
	if _, err := p.expect("AS", "after the name of the WITH query "+name.String()); err != nil {
		return ast.CTE{}, err
	}
	if _, err := p.expect("(", "before the WITH query "+name.String()); err != nil {
		return ast.CTE{}, err
	}
	if c.Query, err = p.query(); err != nil {
		return ast.CTE{}, err
	}
	if _, err := p.expect(")", "after the WITH query "+name.String()); err != nil {
		return ast.CTE{}, err
	}
	return c, nil
}

// setExpr parses operands joined by UNION and EXCEPT (left to right),
// whose operands are joined by INTERSECT, which binds tighter.
func (p *parser) setExpr() (ast.SetExpr, error) { return p.setLevel(false) }

func (p *parser) setLevel(intersect bool) (ast.SetExpr, error) {
	var left ast.SetExpr
	var err error
	if intersect {
		left, err = p.setPrimary()
	} else {
		left, err = p.setLevel(true)
	}
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.is("MINUS") {
			return nil, unsupported(t, "MINUS; use EXCEPT")
		}
		if intersect && !t.is("INTERSECT") || !intersect && !t.is("UNION") && !t.is("EXCEPT") {
			return left, nil
		}
		p.next()
		op := &ast.SetOp{Pos: left.Position(), Op: t.upper, L: left}
		if p.accept("ALL") {
			op.All = true
		} else if p.accept("DISTINCT") {
			op.Distinct = true
		}
		if intersect {
			op.R, err = p.setPrimary()
		} else {
			op.R, err = p.setLevel(true)
		}
		if err != nil {
			return nil, err
		}
		left = op
	}
}

// setPrimary parses a SELECT, VALUES or a parenthesized query. A
// parenthesized query with nothing but a body is its body: the
// parentheses only group.
func (p *parser) setPrimary() (ast.SetExpr, error) {
	t := p.peek()
	switch {
	case t.is("SELECT"):
		return p.selectBody()
	case t.is("VALUES"):
		return p.values()
	case t.is("("):
		p.next()
		q, err := p.query()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(")", "after the parenthesized query"); err != nil {
			return nil, err
		}
		if q.With == nil && q.OrderBy == nil && q.Limit == nil && q.Offset == nil {
			return q.Body, nil
		}
		return &ast.ParenQuery{Pos: t.pos, Query: q}, nil
	}
	return nil, p.expected("SELECT, VALUES or '(' to start a query")
}

// values parses VALUES (a, b), (c, d).
func (p *parser) values() (ast.SetExpr, error) {
	t := p.next()
	v := &ast.Values{Pos: t.pos}
	for {
		if _, err := p.expect("(", "before a row of VALUES"); err != nil {
			return nil, err
		}
		row, err := p.exprList("a row of VALUES")
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(")", "after a row of VALUES"); err != nil {
			return nil, err
		}
		v.Rows = append(v.Rows, row)
		if !p.accept(",") {
			return v, nil
		}
	}
}

// selectBody parses SELECT ... [FROM] [WHERE] [GROUP BY] [HAVING].
func (p *parser) selectBody() (ast.SetExpr, error) {
	t := p.next()
	s := &ast.Select{Pos: t.pos}
	if p.accept("DISTINCT") {
		s.Distinct = true
	} else {
		p.accept("ALL")
	}
	for {
		it, err := p.selectItem()
		if err != nil {
			return nil, err
		}
		s.Items = append(s.Items, it)
		if !p.accept(",") {
			break
		}
	}
	var err error
	if p.accept("FROM") {
		if s.From, err = p.from(); err != nil {
			return nil, err
		}
	}
	if p.accept("WHERE") {
		if s.Where, err = p.expr(); err != nil {
			return nil, err
		}
	}
	if p.acceptSeq("GROUP", "BY") {
		for _, w := range []string{"GROUPING", "ROLLUP", "CUBE"} {
			if p.peek().is(w) && (w == "GROUPING" || p.peekAt(1).is("(")) {
				return nil, unsupported(p.peek(), "GROUP BY "+w)
			}
		}
		if s.GroupBy, err = p.exprList("GROUP BY"); err != nil {
			return nil, err
		}
	}
	if p.accept("HAVING") {
		if s.Having, err = p.expr(); err != nil {
			return nil, err
		}
	}
	if p.peek().is("WINDOW") {
		return nil, unsupported(p.peek(), "the WINDOW clause")
	}
	if p.peek().is("QUALIFY") {
		return nil, unsupported(p.peek(), "QUALIFY")
	}
	return s, nil
}

// selectItem parses *, t.*, or expr [[AS] alias].
func (p *parser) selectItem() (ast.SelectItem, error) {
	t := p.peek()
	if p.accept("*") {
		return ast.SelectItem{Pos: t.pos, X: &ast.Star{Pos: t.pos}}, nil
	}
	x, err := p.expr()
	if err != nil {
		return ast.SelectItem{}, err
	}
	it := ast.SelectItem{Pos: t.pos, X: x}
	if _, star := x.(*ast.Star); star {
		return it, nil
	}
	if p.accept("AS") {
		a, err := p.ident("an alias after AS")
		if err != nil {
			return ast.SelectItem{}, err
		}
		it.Alias = &a
	} else if isIdent(p.peek()) {
		a, _ := p.ident("an alias")
		it.Alias = &a
	}
	return it, nil
}

// orderList parses expr [ASC|DESC] [NULLS FIRST|LAST], ....
func (p *parser) orderList() ([]ast.OrderItem, error) {
	var items []ast.OrderItem
	for {
		t := p.peek()
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		o := ast.OrderItem{Pos: t.pos, X: x}
		if p.accept("DESC") {
			o.Desc = true
		} else if p.accept("ASC") {
			o.Asc = true
		}
		if p.accept("NULLS") {
			switch n := p.peek(); {
			case n.is("FIRST"), n.is("LAST"):
				o.Nulls = p.next().upper
			default:
				return nil, p.expected("FIRST or LAST after NULLS")
			}
		}
		items = append(items, o)
		if !p.accept(",") {
			return items, nil
		}
	}
}
