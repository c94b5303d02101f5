package parse

import (
	"fmt"
	"strings"

	"github.com/weir-stream/weir/internal/sql/ast"
)

// parser is a recursive-descent parser over the tokens of one text.
type parser struct {
	toks []token
	i    int
	// depth counts nested expressions and queries, to refuse input so
	// deeply nested that it would exhaust the stack.
	depth int
}

// maxDepth bounds the nesting of expressions and queries.
const maxDepth = 1000

func newParser(text string) (*parser, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	return &parser{toks: toks}, nil
}

func (p *parser) peek() token { return p.toks[p.i] }

// peekAt returns the token k places ahead (the EOF token past the end).
func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// accept consumes the next token if it is the keyword or symbol s.
func (p *parser) accept(s string) bool {
	if p.peek().is(s) {
		p.next()
		return true
	}
	return false
}

// acceptSeq consumes the keywords ss if the next tokens are all of them.
func (p *parser) acceptSeq(ss ...string) bool {
	for k, s := range ss {
		if !p.peekAt(k).is(s) {
			return false
		}
	}
	p.i += len(ss)
	return true
}

func errorAt(t token, format string, args ...any) *Error {
	return &Error{Line: t.pos.Line, Column: t.pos.Column, Msg: fmt.Sprintf(format, args...)}
}

// expected returns the error "expected what, found <next token>".
func (p *parser) expected(what string) *Error {
	t := p.peek()
	return errorAt(t, "expected %s, found %s", what, t.describe())
}

// expectedName is expected for a name: a reserved word in its place
// gets the hint to quote it.
func (p *parser) expectedName(what string) *Error {
	err := p.expected(what)
	if t := p.peek(); t.kind == tokWord && ast.Reserved(t.text) {
		err.Msg += " (a reserved word: write `" + t.text + "` in backquotes to use it as a name)"
	}
	return err
}

// expect consumes the keyword or symbol s, or fails with "expected 's'
// context, found ...".
func (p *parser) expect(s, context string) (token, error) {
	t := p.peek()
	if !t.is(s) {
		what := "'" + s + "'"
		if context != "" {
			what += " " + context
		}
		return t, p.expected(what)
	}
	return p.next(), nil
}

func (p *parser) expectEOF(context string) error {
	if p.peek().kind != tokEOF {
		return p.expected("the end of the input " + context)
	}
	return nil
}

// unsupported reports a construct recognised but not supported.
func unsupported(t token, what string) *Error {
	return errorAt(t, "%s is not supported", what)
}

// isIdent reports whether t can be an identifier: a backquoted name or
// a word that is not reserved.
func isIdent(t token) bool {
	return t.kind == tokQuoted || t.kind == tokWord && !ast.Reserved(t.text)
}

// ident parses an identifier; what names it in the error.
func (p *parser) ident(what string) (ast.Ident, error) {
	t := p.peek()
	if !isIdent(t) {
		return ast.Ident{}, p.expectedName(what)
	}
	p.next()
	return ast.Ident{Pos: t.pos, Name: t.text, Quoted: t.kind == tokQuoted}, nil
}

// name parses a possibly qualified name: a.b.c.
func (p *parser) name(what string) (ast.Name, error) {
	id, err := p.ident(what)
	if err != nil {
		return nil, err
	}
	n := ast.Name{id}
	for p.peek().is(".") && isIdent(p.peekAt(1)) {
		p.next()
		id, _ := p.ident(what)
		n = append(n, id)
	}
	return n, nil
}

// identList parses "(a, b, ...)"; context names the list in errors.
func (p *parser) identList(what, context string) ([]ast.Ident, error) {
	if _, err := p.expect("(", "before the "+context); err != nil {
		return nil, err
	}
	var ids []ast.Ident
	for {
		id, err := p.ident(what)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
		if !p.accept(",") {
			break
		}
	}
	if _, err := p.expect(")", "after the "+context); err != nil {
		return nil, err
	}
	return ids, nil
}

// stringLit parses a string literal.
func (p *parser) stringLit(what string) (string, error) {
	t := p.peek()
	if t.kind != tokString {
		return "", p.expected(what)
	}
	p.next()
	return t.text, nil
}

// enter counts one level of nesting, failing past maxDepth; leave
// undoes it.
func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return errorAt(p.peek(), "the statement nests deeper than %d levels", maxDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

func upper(s string) string { return strings.ToUpper(s) }
