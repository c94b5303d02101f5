package plan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/weir-stream/weir/internal/sql/ast"
	"github.com/weir-stream/weir/internal/sql/expr"
)

// Error is a planning error at a place in the script.
type Error struct {
	Line, Column int
	Msg          string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// ErrUnsupported is wrapped by the errors of constructs weir does not
// run; the message names the construct.
var ErrUnsupported = errors.New("not supported")

func errorAt(p ast.Pos, format string, args ...any) error {
	return &Error{Line: p.Line, Column: p.Column, Msg: fmt.Sprintf(format, args...)}
}

// unsupportedAt returns an error wrapping ErrUnsupported.
func unsupportedAt(p ast.Pos, what string) error {
	return fmt.Errorf("%w: %w", &Error{Line: p.Line, Column: p.Column, Msg: what}, ErrUnsupported)
}

// wrapAt gives an error without a place the place p.
func wrapAt(p ast.Pos, err error) error {
	var pe *Error
	if errors.As(err, &pe) {
		return err
	}
	return &Error{Line: p.Line, Column: p.Column, Msg: err.Error()}
}

// scope is the columns a query's expressions can name: a node's output
// columns with their qualifiers.
type scope struct {
	cols []Column
}

func nodeScope(n Node) *scope { return &scope{cols: append([]Column(nil), n.Columns()...)} }

func tableScope(t *Table, alias string) *scope {
	s := &scope{}
	for _, c := range t.Columns {
		s.cols = append(s.cols, Column{Name: c.Name, Table: alias, T: c.T})
	}
	return s
}

// requalify returns the scope with every column qualified by alias.
func (s *scope) requalify(alias string) *scope {
	out := &scope{cols: append([]Column(nil), s.cols...)}
	for i := range out.cols {
		out.cols[i].Table = alias
	}
	return out
}

// resolve finds the column a reference names: qualifier.column,
// qualifier.row.field, column, or row.field of a flattened ROW column.
// Exact names win over names matched ignoring case.
func (s *scope) resolve(ref *ast.Ref) (*expr.Col, error) {
	parts := make([]string, len(ref.Name))
	for i, p := range ref.Name {
		parts[i] = p.Name
	}
	for _, fold := range []bool{false, true} {
		eq := func(a, b string) bool {
			if fold {
				return strings.EqualFold(a, b)
			}
			return a == b
		}
		var hits []int
		if len(parts) > 1 {
			rest := strings.Join(parts[1:], ".")
			for i, c := range s.cols {
				if c.Table != "" && eq(c.Table, parts[0]) && eq(c.Name, rest) {
					hits = append(hits, i)
				}
			}
		}
		if len(hits) == 0 {
			whole := strings.Join(parts, ".")
			for i, c := range s.cols {
				if eq(c.Name, whole) {
					hits = append(hits, i)
				}
			}
		}
		switch len(hits) {
		case 0:
			continue
		case 1:
			c := s.cols[hits[0]]
			return &expr.Col{Index: hits[0], Name: c.Name, T: c.T}, nil
		default:
			var in []string
			for _, h := range hits {
				in = append(in, s.cols[h].Table)
			}
			return nil, errorAt(ref.Pos, "column %s is ambiguous: it is in %s; qualify it", joinName(ref.Name), strings.Join(in, " and "))
		}
	}
	return nil, errorAt(ref.Pos, "column %s not found; the columns here are %s", joinName(ref.Name), s.names())
}

func (s *scope) names() string {
	var out []string
	for _, c := range s.cols {
		n := c.Name
		if c.Table != "" {
			n = c.Table + "." + n
		}
		out = append(out, n)
	}
	if len(out) > 12 {
		out = append(out[:12], "...")
	}
	return strings.Join(out, ", ")
}
