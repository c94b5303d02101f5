package plan

import (
	"fmt"
	"strings"

	"github.com/weir-stream/weir/internal/sql/ast"
	"github.com/weir-stream/weir/internal/sql/expr"
)

// Program is a bound script: its catalog after the DDL, and the
// statements that produce rows.
type Program struct {
	Catalog *Catalog
	// Statements are the INSERTs and queries in script order, each
	// bound and optimized.
	Statements []*Statement
	// Settings are the script's SET options, in order of the keys'
	// first appearance; a later SET of a key wins.
	Settings map[string]string
	// Explain marks a script that has EXPLAIN statements: it is
	// explained, not run.
	Explain bool

	unoptimized bool
}

// Statement is one INSERT INTO (Sink.Table set) or query (Sink.Table
// nil: its rows are printed).
type Statement struct {
	Text string
	// Logical is the plan as bound, before Optimize, explained.
	Logical string
	// Sink is the optimized plan.
	Sink *Sink
}

// Bind binds a parsed script over cat, which it updates with the
// script's DDL.
func Bind(stmts []ast.Stmt, cat *Catalog) (*Program, error) {
	return bind(stmts, cat, true)
}

// BindUnoptimized binds as Bind does but leaves each statement's plan
// as bound: rankings without folded limits, projections not merged,
// columns not pruned. A reference evaluator runs that plan to check the
// optimized one.
func BindUnoptimized(stmts []ast.Stmt, cat *Catalog) (*Program, error) {
	return bind(stmts, cat, false)
}

func bind(stmts []ast.Stmt, cat *Catalog, optimize bool) (*Program, error) {
	p := &Program{Catalog: cat, Settings: map[string]string{}, unoptimized: !optimize}
	for _, s := range stmts {
		if err := p.statement(s); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *Program) statement(s ast.Stmt) error {
	cat := p.Catalog
	switch s := s.(type) {
	case *ast.CreateTable:
		return cat.CreateTable(s)
	case *ast.CreateView:
		return cat.CreateView(s)
	case *ast.CreateFunction:
		return cat.CreateFunction(s)
	case *ast.Set:
		if s.Option != nil {
			p.Settings[s.Option.Key] = s.Option.Value
		}
		return nil
	case *ast.Reset:
		if s.Key == nil {
			clear(p.Settings)
		} else {
			delete(p.Settings, *s.Key)
		}
		return nil
	case *ast.Explain:
		p.Explain = true
		return p.statement(s.Stmt)
	case *ast.Insert:
		return p.insert(s)
	case *ast.QueryStmt:
		n, err := (&binder{cat: cat}).query(s.Query)
		if err != nil {
			return err
		}
		return p.add(s.Query.String(), &Sink{In: n})
	}
	return unsupportedAt(s.Position(), fmt.Sprintf("statement %T is not supported", s))
}

func (p *Program) insert(s *ast.Insert) error {
	name := joinName(s.Table)
	t, ok := p.Catalog.Table(name)
	if !ok {
		return errorAt(s.Pos, "INSERT INTO %s: table not found", name)
	}
	if s.Overwrite {
		return unsupportedAt(s.Pos, "INSERT OVERWRITE is not supported on a stream")
	}
	n, err := (&binder{cat: p.Catalog}).query(s.Query)
	if err != nil {
		return err
	}
	target := t.Writable()
	cols := n.Columns()
	// The query's columns by position, or by the INSERT's column list.
	pos := make([]int, len(target))
	for i := range pos {
		pos[i] = i
	}
	if len(s.Columns) > 0 {
		for i := range pos {
			pos[i] = -1
		}
		for qi, c := range s.Columns {
			found := false
			for i, ti := range target {
				if strings.EqualFold(t.Columns[ti].Name, c.Name) {
					pos[i], found = qi, true
				}
			}
			if !found {
				return errorAt(c.Pos, "INSERT INTO %s: no column %s", name, c.Name)
			}
		}
		if len(s.Columns) != len(cols) {
			return errorAt(s.Pos, "INSERT INTO %s names %d columns but the query has %d", name, len(s.Columns), len(cols))
		}
	} else if len(cols) != len(target) {
		return errorAt(s.Pos, "INSERT INTO %s: the table has %d columns but the query has %d", name, len(target), len(cols))
	}
	c := &Calc{In: n}
	for i, ti := range target {
		tc := t.Columns[ti]
		var e expr.Expr = expr.NullLit()
		if pos[i] >= 0 {
			e = &expr.Col{Index: pos[i], Name: cols[pos[i]].Name, T: cols[pos[i]].T}
		}
		if !e.Type().Same(tc.T) {
			if e, err = expr.NewCast(e, tc.T.Plain(), false); err != nil {
				return errorAt(s.Pos, "INSERT INTO %s: column %s: %v", name, tc.Name, err)
			}
		}
		c.Proj = append(c.Proj, e)
		c.Names = append(c.Names, tc.Name)
	}
	return p.add(s.String(), &Sink{In: c, Table: t})
}

func (p *Program) add(text string, s *Sink) error {
	logical := Explain(s)
	var n Node = s
	if !p.unoptimized {
		var err error
		if n, err = Optimize(s); err != nil {
			return err
		}
	}
	st := &Statement{Text: text, Logical: logical, Sink: n.(*Sink)}
	p.Statements = append(p.Statements, st)
	return nil
}

// Writable returns the indexes of the columns an INSERT writes: the
// physical columns and the metadata columns that are not VIRTUAL.
func (t *Table) Writable() []int {
	var out []int
	for i, c := range t.Columns {
		if c.Kind == Physical || c.Kind == Metadata && !c.Virtual {
			out = append(out, i)
		}
	}
	return out
}
