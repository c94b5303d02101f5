package parse

import (
	"strconv"
	"strings"

	"github.com/weir-stream/weir/internal/sql/ast"
)

// standardForms are functions whose SQL-standard forms use keywords
// between their arguments, which weir does not support.
var standardForms = map[string]bool{"SUBSTRING": true, "TRIM": true, "POSITION": true, "OVERLAY": true}

// call parses the arguments of a call to name (at "(") and what may
// follow them: FILTER (WHERE ...) and OVER.
func (p *parser) call(name ast.Name) (ast.Expr, error) {
	c := &ast.Call{Pos: name.Position(), Name: name}
	fn := name.String()
	if _, err := p.expect("(", "after "+fn); err != nil {
		return nil, err
	}
	upper := ""
	if len(name) == 1 && !name[0].Quoted {
		upper = strings.ToUpper(name[0].Name)
	}
	switch {
	case p.peek().is("*"):
		p.next()
		c.Star = true
	case p.peek().is(")"):
	default:
		if p.accept("DISTINCT") {
			c.Distinct = true
		} else {
			p.accept("ALL")
		}
		if standardForms[upper] && (p.peek().is("BOTH") || p.peek().is("LEADING") || p.peek().is("TRAILING")) {
			return nil, unsupported(p.peek(), "the form "+upper+"(... FROM ...); call it with arguments separated by commas")
		}
		for {
			a, err := p.arg()
			if err != nil {
				return nil, err
			}
			c.Args = append(c.Args, a)
			if standardForms[upper] && (p.peek().is("FROM") || p.peek().is("FOR") || p.peek().is("PLACING")) {
				return nil, unsupported(p.peek(), "the form "+upper+"(... "+p.peek().upper+" ...); call it with arguments separated by commas")
			}
			if !p.accept(",") {
				break
			}
		}
	}
	if _, err := p.expect(")", "after the arguments of "+fn); err != nil {
		return nil, err
	}
	if p.peek().is("WITHIN") {
		return nil, unsupported(p.peek(), "WITHIN GROUP")
	}
	if p.peek().is("IGNORE") || p.peek().is("RESPECT") {
		return nil, unsupported(p.peek(), p.peek().upper+" NULLS")
	}
	if p.accept("FILTER") {
		if _, err := p.expect("(", "after FILTER"); err != nil {
			return nil, err
		}
		if _, err := p.expect("WHERE", "after FILTER ("); err != nil {
			return nil, err
		}
		f, err := p.expr()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(")", "after the FILTER condition"); err != nil {
			return nil, err
		}
		c.Filter = f
	}
	if p.peek().is("OVER") {
		w, err := p.over()
		if err != nil {
			return nil, err
		}
		c.Over = w
	}
	return c, nil
}

// arg parses an argument of a call: an expression, name => value,
// TABLE t [PARTITION BY ...] or DESCRIPTOR(cols).
func (p *parser) arg() (ast.Expr, error) {
	t := p.peek()
	switch {
	case isIdent(t) && p.peekAt(1).is("=>"):
		name, _ := p.ident("an argument name")
		p.next()
		v, err := p.arg()
		if err != nil {
			return nil, err
		}
		return &ast.NamedArg{Pos: name.Pos, Name: name, Value: v}, nil
	case t.is("TABLE"):
		p.next()
		n, err := p.name("a table name after TABLE")
		if err != nil {
			return nil, err
		}
		a := &ast.TableArg{Pos: t.pos, Name: n}
		if p.acceptSeq("PARTITION", "BY") {
			if a.PartitionBy, err = p.partitionColumns(); err != nil {
				return nil, err
			}
		}
		if p.peek().is("ORDER") {
			return nil, unsupported(p.peek(), "ORDER BY on a table argument")
		}
		return a, nil
	case t.is("DESCRIPTOR") && p.peekAt(1).is("("):
		p.next()
		cols, err := p.identList("a column name", "DESCRIPTOR's columns")
		if err != nil {
			return nil, err
		}
		return &ast.Descriptor{Pos: t.pos, Columns: cols}, nil
	}
	return p.expr()
}

// partitionColumns parses the column, or the parenthesized columns, of
// a table argument's PARTITION BY.
func (p *parser) partitionColumns() ([]ast.Expr, error) {
	paren := p.accept("(")
	var cols []ast.Expr
	for {
		n, err := p.name("a column name after PARTITION BY")
		if err != nil {
			return nil, err
		}
		cols = append(cols, &ast.Ref{Pos: n.Position(), Name: n})
		if !paren || !p.accept(",") {
			break
		}
	}
	if paren {
		if _, err := p.expect(")", "after the PARTITION BY columns"); err != nil {
			return nil, err
		}
	}
	return cols, nil
}

// over parses OVER name or OVER (PARTITION BY ... ORDER BY ... frame).
func (p *parser) over() (*ast.Window, error) {
	t := p.next()
	w := &ast.Window{Pos: t.pos}
	if isIdent(p.peek()) {
		id, _ := p.ident("a window name")
		w.Ref = &id
		return w, nil
	}
	if _, err := p.expect("(", "or a window name after OVER"); err != nil {
		return nil, err
	}
	var err error
	if p.acceptSeq("PARTITION", "BY") {
		if w.PartitionBy, err = p.exprList("PARTITION BY"); err != nil {
			return nil, err
		}
	}
	if p.acceptSeq("ORDER", "BY") {
		if w.OrderBy, err = p.orderList(); err != nil {
			return nil, err
		}
	}
	if u := p.peek(); u.is("ROWS") || u.is("RANGE") {
		if w.Frame, err = p.frame(); err != nil {
			return nil, err
		}
	}
	if _, err := p.expect(")", "after the window specification"); err != nil {
		return nil, err
	}
	return w, nil
}

// frame parses ROWS|RANGE BETWEEN bound AND bound, or ROWS|RANGE bound.
func (p *parser) frame() (*ast.Frame, error) {
	t := p.next()
	f := &ast.Frame{Pos: t.pos, Unit: t.upper}
	between := p.accept("BETWEEN")
	var err error
	if f.Start, err = p.bound(); err != nil {
		return nil, err
	}
	if between {
		if _, err := p.expect("AND", "between the frame's bounds"); err != nil {
			return nil, err
		}
		end, err := p.bound()
		if err != nil {
			return nil, err
		}
		f.End = &end
	}
	return f, nil
}

// bound parses UNBOUNDED PRECEDING|FOLLOWING, CURRENT ROW, or expr
// PRECEDING|FOLLOWING.
func (p *parser) bound() (ast.Bound, error) {
	t := p.peek()
	b := ast.Bound{Pos: t.pos}
	switch {
	case p.acceptSeq("UNBOUNDED", "PRECEDING"):
		b.Kind = ast.UnboundedPreceding
	case p.acceptSeq("UNBOUNDED", "FOLLOWING"):
		b.Kind = ast.UnboundedFollowing
	case p.acceptSeq("CURRENT", "ROW"):
		b.Kind = ast.CurrentRow
	default:
		off, err := p.exprAbove(ast.PrecPredicate)
		if err != nil {
			return b, err
		}
		b.Offset = off
		switch {
		case p.accept("PRECEDING"):
			b.Kind = ast.Preceding
		case p.accept("FOLLOWING"):
			b.Kind = ast.Following
		default:
			return b, p.expected("PRECEDING or FOLLOWING after the frame's offset")
		}
	}
	return b, nil
}

// cast parses CAST(x AS type) or TRY_CAST(x AS type).
func (p *parser) cast(try bool) (ast.Expr, error) {
	t := p.next()
	if _, err := p.expect("(", "after "+t.upper); err != nil {
		return nil, err
	}
	x, err := p.expr()
	if err != nil {
		return nil, err
	}
	if _, err := p.expect("AS", "in "+t.upper+"(value AS type)"); err != nil {
		return nil, err
	}
	typ, err := p.dataType("a type to cast to")
	if err != nil {
		return nil, err
	}
	if _, err := p.expect(")", "after the type of "+t.upper); err != nil {
		return nil, err
	}
	return &ast.Cast{Pos: t.pos, X: x, Type: typ, Try: try}, nil
}

// extract parses EXTRACT(unit FROM x).
func (p *parser) extract() (ast.Expr, error) {
	t := p.next()
	if _, err := p.expect("(", "after EXTRACT"); err != nil {
		return nil, err
	}
	u := p.peek()
	if u.kind != tokWord || ast.Reserved(u.text) {
		return nil, p.expected("a time unit (YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, ...) in EXTRACT")
	}
	p.next()
	if _, err := p.expect("FROM", "after EXTRACT's unit"); err != nil {
		return nil, err
	}
	x, err := p.expr()
	if err != nil {
		return nil, err
	}
	if _, err := p.expect(")", "after EXTRACT's argument"); err != nil {
		return nil, err
	}
	return &ast.Extract{Pos: t.pos, Unit: u.upper, X: x}, nil
}

// intervalUnits are the units of interval literals, singular and plural.
var intervalUnits = map[string]bool{}

func init() {
	for _, u := range []string{"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND"} {
		intervalUnits[u] = true
		intervalUnits[u+"S"] = true
	}
}

// interval parses INTERVAL [-|+]'value' unit [TO unit].
func (p *parser) interval() (ast.Expr, error) {
	t := p.next()
	e := &ast.Interval{Pos: t.pos}
	if p.accept("-") {
		e.Negative = true
	} else {
		p.accept("+")
	}
	v, err := p.stringLit("a quoted value after INTERVAL (as in INTERVAL '10' SECOND)")
	if err != nil {
		return nil, err
	}
	e.Value = v
	unit := func() (string, error) {
		u := p.peek()
		if u.kind != tokWord || !intervalUnits[u.upper] {
			return "", p.expected("a unit of the interval (SECOND, MINUTE, HOUR, DAY, MONTH, YEAR, ...)")
		}
		p.next()
		if p.peek().is("(") {
			return "", unsupported(p.peek(), "a precision on an interval's unit")
		}
		return u.upper, nil
	}
	if e.Unit, err = unit(); err != nil {
		return nil, err
	}
	if p.accept("TO") {
		if e.ToUnit, err = unit(); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// caseExpr parses CASE [operand] WHEN ... THEN ... [ELSE ...] END.
func (p *parser) caseExpr() (ast.Expr, error) {
	t := p.next()
	c := &ast.Case{Pos: t.pos}
	var err error
	if !p.peek().is("WHEN") {
		if c.Operand, err = p.expr(); err != nil {
			return nil, err
		}
	}
	for p.peek().is("WHEN") {
		w := ast.When{Pos: p.next().pos}
		if w.Cond, err = p.expr(); err != nil {
			return nil, err
		}
		if _, err := p.expect("THEN", "after the WHEN condition"); err != nil {
			return nil, err
		}
		if w.Result, err = p.expr(); err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, w)
	}
	if len(c.Whens) == 0 {
		return nil, p.expected("WHEN in CASE")
	}
	if p.accept("ELSE") {
		if c.Else, err = p.expr(); err != nil {
			return nil, err
		}
	}
	if _, err := p.expect("END", "to end the CASE of line "+strconv.Itoa(t.pos.Line)); err != nil {
		return nil, err
	}
	return c, nil
}
