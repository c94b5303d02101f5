package parse

import (
	"fmt"

	"github.com/weir-stream/weir/internal/sql/ast"
)

// expr parses an expression.
func (p *parser) expr() (ast.Expr, error) { return p.exprAbove(0) }

// exprAbove parses an expression whose operators all bind tighter than
// rbp (precedence climbing; the precedences are ast's, Flink's).
func (p *parser) exprAbove(rbp int) (ast.Expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	left, err := p.prefix()
	if err != nil {
		return nil, err
	}
	for p.infixPrecedence() > rbp {
		if left, err = p.infix(left); err != nil {
			return nil, err
		}
	}
	return left, nil
}

// infixPrecedence returns the precedence of the operator at the next
// token, or 0 if none is there.
func (p *parser) infixPrecedence() int {
	t := p.peek()
	switch t.kind {
	case tokSymbol:
		if t.text == "[" {
			return ast.PrecPrimary
		}
		return ast.BinaryPrecedence(t.text)
	case tokWord:
		switch t.upper {
		case "AND", "OR":
			return ast.BinaryPrecedence(t.upper)
		case "IS":
			if p.peekAt(1).is("DISTINCT") || p.peekAt(1).is("NOT") && p.peekAt(2).is("DISTINCT") {
				return ast.PrecComparison
			}
			return ast.PrecIs
		case "BETWEEN", "IN", "LIKE", "SIMILAR":
			return ast.PrecPredicate
		case "NOT":
			switch n := p.peekAt(1); {
			case n.is("BETWEEN"), n.is("IN"), n.is("LIKE"), n.is("SIMILAR"):
				return ast.PrecPredicate
			}
		}
	}
	return 0
}

// infix parses the operator at the next token and its right operand.
func (p *parser) infix(left ast.Expr) (ast.Expr, error) {
	t := p.next()
	pos := left.Position()
	switch {
	case t.is("["):
		i, err := p.expr()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect("]", "after the index"); err != nil {
			return nil, err
		}
		return &ast.Index{Pos: pos, X: left, Index: i}, nil
	case t.is("IS"):
		return p.is(left)
	}
	not := false
	if t.is("NOT") {
		not = true
		t = p.next()
	}
	switch {
	case t.is("BETWEEN"):
		e := &ast.Between{Pos: pos, X: left, Not: not}
		var err error
		if e.Lo, err = p.exprAbove(ast.PrecPredicate); err != nil {
			return nil, err
		}
		if _, err := p.expect("AND", "in BETWEEN ... AND ..."); err != nil {
			return nil, err
		}
		if e.Hi, err = p.exprAbove(ast.PrecPredicate); err != nil {
			return nil, err
		}
		return e, nil
	case t.is("IN"):
		return p.in(left, not)
	case t.is("LIKE"):
		e := &ast.Like{Pos: pos, X: left, Not: not}
		var err error
		if e.Pattern, err = p.exprAbove(ast.PrecPredicate); err != nil {
			return nil, err
		}
		if p.accept("ESCAPE") {
			if e.Escape, err = p.exprAbove(ast.PrecPredicate); err != nil {
				return nil, err
			}
		}
		return e, nil
	case t.is("SIMILAR"):
		return nil, unsupported(t, "SIMILAR TO")
	}
	op := t.text
	if t.kind == tokWord {
		op = t.upper
	}
	right, err := p.exprAbove(ast.BinaryPrecedence(op))
	if err != nil {
		return nil, err
	}
	return &ast.Binary{Pos: pos, Op: op, L: left, R: right}, nil
}

// is parses the rest of x IS [NOT] NULL|TRUE|FALSE|UNKNOWN or x IS
// [NOT] DISTINCT FROM y.
func (p *parser) is(left ast.Expr) (ast.Expr, error) {
	not := p.accept("NOT")
	t := p.peek()
	switch {
	case t.is("NULL"), t.is("TRUE"), t.is("FALSE"), t.is("UNKNOWN"):
		p.next()
		return &ast.Is{Pos: left.Position(), X: left, Not: not, What: t.upper}, nil
	case t.is("DISTINCT"):
		p.next()
		if _, err := p.expect("FROM", "after IS DISTINCT"); err != nil {
			return nil, err
		}
		op := "IS DISTINCT FROM"
		if not {
			op = "IS NOT DISTINCT FROM"
		}
		right, err := p.exprAbove(ast.PrecComparison)
		if err != nil {
			return nil, err
		}
		return &ast.Binary{Pos: left.Position(), Op: op, L: left, R: right}, nil
	}
	return nil, p.expected("NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM after IS")
}

// in parses the rest of x [NOT] IN (list) or x [NOT] IN (query).
func (p *parser) in(left ast.Expr, not bool) (ast.Expr, error) {
	if _, err := p.expect("(", "after IN"); err != nil {
		return nil, err
	}
	e := &ast.In{Pos: left.Position(), X: left, Not: not}
	if startsQuery(p.peek()) {
		q, err := p.query()
		if err != nil {
			return nil, err
		}
		e.Query = q
	} else {
		list, err := p.exprList("the IN list")
		if err != nil {
			return nil, err
		}
		e.List = list
	}
	if _, err := p.expect(")", "after the IN list"); err != nil {
		return nil, err
	}
	return e, nil
}

// startsQuery reports whether t starts a query inside parentheses.
func startsQuery(t token) bool { return t.is("SELECT") || t.is("WITH") || t.is("VALUES") }

// exprList parses expr {, expr}.
func (p *parser) exprList(what string) ([]ast.Expr, error) {
	var list []ast.Expr
	for {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		list = append(list, e)
		if !p.accept(",") {
			return list, nil
		}
	}
}

// niladic are the functions called without parentheses.
var niladic = map[string]bool{
	"CURRENT_TIMESTAMP": true, "CURRENT_DATE": true, "CURRENT_TIME": true, "LOCALTIMESTAMP": true,
	"LOCALTIME": true, "CURRENT_USER": true, "SESSION_USER": true, "USER": true,
	"CURRENT_CATALOG": true, "CURRENT_DATABASE": true,
}

// callableReserved are reserved words that are also function names.
var callableReserved = map[string]bool{"LEFT": true, "RIGHT": true, "INSERT": true}

// prefix parses an operand: a literal, a name, a call, a special form,
// a parenthesized expression or subquery, or a prefix operator with its
// operand.
func (p *parser) prefix() (ast.Expr, error) {
	t := p.peek()
	switch t.kind {
	case tokNumber:
		p.next()
		return &ast.Literal{Pos: t.pos, Kind: ast.LitNumber, Text: t.text}, nil
	case tokString:
		p.next()
		return &ast.Literal{Pos: t.pos, Kind: ast.LitString, Text: t.text}, nil
	case tokQuoted:
		return p.nameOrCall()
	case tokSymbol:
		switch t.text {
		case "-", "+":
			p.next()
			x, err := p.exprAbove(ast.PrecUnary)
			if err != nil {
				return nil, err
			}
			return &ast.Unary{Pos: t.pos, Op: t.text, X: x}, nil
		case "(":
			return p.parenthesized()
		case "?":
			return nil, unsupported(t, "a parameter marker ?")
		}
		return nil, p.expected("an expression")
	case tokEOF:
		return nil, p.expected("an expression")
	}
	next := p.peekAt(1)
	switch t.upper {
	case "NOT":
		p.next()
		x, err := p.exprAbove(ast.PrecNot)
		if err != nil {
			return nil, err
		}
		return &ast.Unary{Pos: t.pos, Op: "NOT", X: x}, nil
	case "TRUE", "FALSE":
		p.next()
		return &ast.Literal{Pos: t.pos, Kind: ast.LitBool, Text: t.upper}, nil
	case "NULL":
		p.next()
		return &ast.Literal{Pos: t.pos, Kind: ast.LitNull, Text: "NULL"}, nil
	case "INTERVAL":
		return p.interval()
	case "CASE":
		return p.caseExpr()
	case "CAST":
		return p.cast(false)
	case "TRY_CAST":
		if next.is("(") {
			return p.cast(true)
		}
	case "EXTRACT":
		return p.extract()
	case "EXISTS":
		p.next()
		if _, err := p.expect("(", "after EXISTS"); err != nil {
			return nil, err
		}
		q, err := p.query()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(")", "after the EXISTS subquery"); err != nil {
			return nil, err
		}
		return &ast.Exists{Pos: t.pos, Query: q}, nil
	case "DATE", "TIME", "TIMESTAMP":
		if next.kind == tokString {
			p.next()
			p.next()
			kind := map[string]ast.LitKind{"DATE": ast.LitDate, "TIME": ast.LitTime, "TIMESTAMP": ast.LitTimestamp}[t.upper]
			return &ast.Literal{Pos: t.pos, Kind: kind, Text: next.text}, nil
		}
	case "ROW":
		if next.is("(") {
			p.next()
			return p.constructor(t, "ROW", "(", ")")
		}
	case "ARRAY", "MAP":
		if next.is("[") {
			p.next()
			return p.constructor(t, t.upper, "[", "]")
		}
		if next.is("(") {
			return nil, unsupported(t, t.upper+" built from a subquery")
		}
	}
	if niladic[t.upper] && !next.is("(") {
		p.next()
		return &ast.Call{Pos: t.pos, Name: ast.Name{{Pos: t.pos, Name: t.text}}, NoParens: true}, nil
	}
	if callableReserved[t.upper] && next.is("(") {
		p.next()
		return p.call(ast.Name{{Pos: t.pos, Name: t.text}})
	}
	if ast.Reserved(t.text) {
		return nil, p.expected("an expression")
	}
	return p.nameOrCall()
}

// nameOrCall parses a column reference a.b.c, a qualified star a.*, or
// a function call f(...).
func (p *parser) nameOrCall() (ast.Expr, error) {
	id, err := p.ident("a name")
	if err != nil {
		return nil, err
	}
	n := ast.Name{id}
	for p.peek().is(".") {
		switch next := p.peekAt(1); {
		case next.is("*"):
			p.next()
			p.next()
			return &ast.Star{Pos: id.Pos, Qualifier: n}, nil
		case isIdent(next):
			p.next()
			part, _ := p.ident("a name")
			n = append(n, part)
		default:
			p.next()
			return nil, p.expected("a name or '*' after '.'")
		}
	}
	if p.peek().is("(") {
		return p.call(n)
	}
	return &ast.Ref{Pos: id.Pos, Name: n}, nil
}

// parenthesized parses (expr) or a scalar subquery (query).
func (p *parser) parenthesized() (ast.Expr, error) {
	open := p.next()
	if startsQuery(p.peek()) {
		q, err := p.query()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(")", "after the subquery"); err != nil {
			return nil, err
		}
		return &ast.Subquery{Pos: open.pos, Query: q}, nil
	}
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.peek().is(",") {
		return nil, unsupported(p.peek(), "a row written as (a, b); write ROW(a, b)")
	}
	if _, err := p.expect(")", fmt.Sprintf("to close the '(' of line %d, column %d", open.pos.Line, open.pos.Column)); err != nil {
		return nil, err
	}
	return e, nil
}

// constructor parses the elements of ROW(...), ARRAY[...] or MAP[...].
func (p *parser) constructor(t token, kind, open, close string) (ast.Expr, error) {
	if _, err := p.expect(open, "after "+kind); err != nil {
		return nil, err
	}
	c := &ast.Constructor{Pos: t.pos, Kind: kind}
	if !p.peek().is(close) {
		var err error
		if c.Elems, err = p.exprList("the elements of " + kind); err != nil {
			return nil, err
		}
	}
	if _, err := p.expect(close, "after the elements of "+kind); err != nil {
		return nil, err
	}
	return c, nil
}
