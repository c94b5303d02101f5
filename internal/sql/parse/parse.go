// Package parse parses weir's SQL dialect — Flink SQL as the Nexmark
// benchmark and Flink's documentation write it — into the syntax tree
// of internal/sql/ast: CREATE TABLE / VIEW / FUNCTION, INSERT, queries
// with window table functions, temporal joins and OVER windows, SET,
// RESET and EXPLAIN. It only parses: names are not resolved and types
// not checked.
//
// Every error it returns is an *Error with the line and column of the
// offending token and a message naming what was found and what was
// expected. Constructs of Flink SQL that weir does not support are
// reported as such by name.
//
// The package is pure: it imports only the standard library and ast.
package parse

import (
	"fmt"
	"strings"

	"github.com/weir-stream/weir/internal/sql/ast"
)

// Error is a syntax error at a position of the text (1-based line and
// byte column).
type Error struct {
	Line, Column int
	Msg          string
}

func (e *Error) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Parse parses a script: statements separated by ";" (a last ";" is
// optional, empty statements are skipped). The error, if any, is an
// *Error.
func Parse(text string) ([]ast.Stmt, error) {
	p, err := newParser(text)
	if err != nil {
		return nil, err
	}
	return p.script()
}

// ParseStatement parses a single statement, optionally ended by ";".
func ParseStatement(text string) (ast.Stmt, error) {
	p, err := newParser(text)
	if err != nil {
		return nil, err
	}
	s, err := p.statement()
	if err != nil {
		return nil, err
	}
	p.accept(";")
	if err := p.expectEOF("after the statement"); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseExpr parses a single scalar expression.
func ParseExpr(text string) (ast.Expr, error) {
	p, err := newParser(text)
	if err != nil {
		return nil, err
	}
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	if err := p.expectEOF("after the expression"); err != nil {
		return nil, err
	}
	return e, nil
}

// Substitute replaces every ${name} in text whose name is a key of vars
// by its value, everywhere (in strings too), the way Nexmark's scripts
// fill in ${NEXMARK_TABLE} or ${TPS}; other ${...} stay as they are. It
// works on the text, before parsing, so the positions of errors refer
// to the substituted text.
func Substitute(text string, vars map[string]string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, "${")
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := strings.IndexByte(text[i:], '}')
		if end < 0 {
			b.WriteString(text)
			return b.String()
		}
		name := text[i+2 : i+end]
		b.WriteString(text[:i])
		if v, ok := vars[name]; ok {
			b.WriteString(v)
		} else {
			b.WriteString(text[i : i+end+1])
		}
		text = text[i+end+1:]
	}
}
