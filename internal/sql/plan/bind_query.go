package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weir-stream/weir/internal/sql/ast"
	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/types"
)

var commonType = types.Common

// with returns a binder for a nested query over scope s.
func (b *binder) with(s *scope) *binder {
	return &binder{cat: b.cat, scope: s, ctes: b.ctes}
}

// query binds a query to a node.
func (b *binder) query(q *ast.Query) (Node, error) {
	if len(q.With) > 0 {
		ctes := map[string]*View{}
		for k, v := range b.ctes {
			ctes[k] = v
		}
		for _, c := range q.With {
			v := &View{Name: c.Name.Name, Query: c.Query}
			for _, col := range c.Columns {
				v.Columns = append(v.Columns, col.Name)
			}
			ctes[c.Name.Name] = v
		}
		b = &binder{cat: b.cat, ctes: ctes}
	}
	if len(q.OrderBy) > 0 || q.Limit != nil || q.Offset != nil {
		return nil, unsupportedAt(q.Pos, "ORDER BY and LIMIT on a streaming query are not supported: rank with ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) and filter on the row number")
	}
	return b.setExpr(q.Body)
}

func (b *binder) setExpr(s ast.SetExpr) (Node, error) {
	switch s := s.(type) {
	case *ast.Select:
		return b.selectNode(s)
	case *ast.ParenQuery:
		return b.query(s.Query)
	case *ast.Values:
		return b.values(s)
	case *ast.SetOp:
		if s.Op != "UNION" {
			return nil, unsupportedAt(s.Pos, s.Op+" is not supported")
		}
		l, err := b.setExpr(s.L)
		if err != nil {
			return nil, err
		}
		r, err := b.setExpr(s.R)
		if err != nil {
			return nil, err
		}
		u, err := union(s.Pos, l, r)
		if err != nil || s.All {
			return u, err
		}
		return distinct(u), nil
	}
	return nil, unsupportedAt(s.Position(), fmt.Sprintf("%T is not supported", s))
}

func (b *binder) values(v *ast.Values) (Node, error) {
	out := &Values{}
	for i, r := range v.Rows {
		row, err := b.with(nil).all(r)
		if err != nil {
			return nil, err
		}
		if i > 0 && len(row) != len(out.Rows[0]) {
			return nil, errorAt(v.Pos, "VALUES rows have %d and %d columns", len(out.Rows[0]), len(row))
		}
		out.Rows = append(out.Rows, row)
	}
	for i, e := range out.Rows[0] {
		t := e.Type()
		for _, r := range out.Rows[1:] {
			c, ok := commonType(t, r[i].Type())
			if !ok {
				return nil, errorAt(v.Pos, "VALUES column %d mixes %s and %s", i+1, t, r[i].Type())
			}
			t = c
		}
		for _, r := range out.Rows {
			if !r[i].Type().Same(t) {
				c, err := expr.NewCast(r[i], t, false)
				if err != nil {
					return nil, wrapAt(v.Pos, err)
				}
				r[i] = c
			}
		}
		out.cols = append(out.cols, Column{Name: "EXPR$" + strconv.Itoa(i), T: t})
	}
	return out, nil
}

// viewNode binds a view's (or a WITH query's) query where it is used.
func (b *binder) viewNode(v *View, alias string) (Node, error) {
	n, err := (&binder{cat: b.cat, ctes: b.ctes}).query(v.Query)
	if err != nil {
		return nil, fmt.Errorf("view %s: %w", v.Name, err)
	}
	return renamed(n, alias, v.Columns, v.Query.Pos)
}

// renamed qualifies n's columns by alias and renames them if names are
// given, by a projection.
func renamed(n Node, alias string, names []string, pos ast.Pos) (Node, error) {
	cols := n.Columns()
	if len(names) > 0 && len(names) != len(cols) {
		return nil, errorAt(pos, "%s names %d columns but its query has %d", alias, len(names), len(cols))
	}
	c := identity(n)
	for i := range cols {
		if len(names) > 0 {
			c.Names[i] = names[i]
		}
		c.Quals[i] = alias
	}
	return c, nil
}

// identity returns a projection of every column of n, unchanged.
func identity(n Node) *Calc {
	cols := n.Columns()
	c := &Calc{In: n, Names: make([]string, len(cols)), Quals: make([]string, len(cols))}
	for i, col := range cols {
		c.Proj = append(c.Proj, &expr.Col{Index: i, Name: col.Name, T: col.T})
		c.Names[i], c.Quals[i] = col.Name, col.Table
	}
	return c
}

func union(pos ast.Pos, l, r Node) (Node, error) {
	lc, rc := l.Columns(), r.Columns()
	if len(lc) != len(rc) {
		return nil, errorAt(pos, "UNION of %d and %d columns", len(lc), len(rc))
	}
	lp, rp := identity(l), identity(r)
	for i := range lc {
		t, ok := commonType(lc[i].T, rc[i].T)
		if !ok {
			return nil, errorAt(pos, "UNION column %s mixes %s and %s", lc[i].Name, lc[i].T, rc[i].T)
		}
		for _, p := range []*Calc{lp, rp} {
			if !p.Proj[i].Type().Same(t) {
				c, err := expr.NewCast(p.Proj[i], t, false)
				if err != nil {
					return nil, wrapAt(pos, err)
				}
				p.Proj[i] = c
			}
		}
	}
	return &Union{Ins: []Node{lp, rp}}, nil
}

// distinct groups by every column without aggregates.
func distinct(n Node) Node {
	keys := make([]int, len(n.Columns()))
	for i := range keys {
		keys[i] = i
	}
	return &Aggregate{In: n, Keys: keys}
}

// selectNode binds a SELECT: FROM (with WHERE pushed into joins and
// below them), then grouping or ranking, then the select list.
func (b *binder) selectNode(s *ast.Select) (Node, error) {
	var in Node = &Values{Rows: [][]expr.Expr{{}}}
	where := s.Where
	if s.From != nil {
		n, rest, err := b.from(s.From, where)
		if err != nil {
			return nil, err
		}
		in, where = n, rest
	}
	sc := nodeScope(in)
	if where != nil {
		cond, err := b.with(sc).scalar(where)
		if err != nil {
			return nil, err
		}
		if err := isBoolean(where.Position(), "WHERE", cond); err != nil {
			return nil, err
		}
		c := identity(in)
		c.Filter = cond
		in = c
	}
	if len(s.GroupBy) > 0 || b.hasAggregate(s) {
		return b.grouped(s, in)
	}
	if s.Having != nil {
		return nil, errorAt(s.Having.Position(), "HAVING without GROUP BY or aggregates")
	}
	in, hook, err := b.ranked(s, in)
	if err != nil {
		return nil, err
	}
	starScope := nodeScope(in)
	if r, ok := in.(*Rank); ok {
		starScope = nodeScope(r.In) // * does not include the row number
	}
	out, err := b.project(s.Items, in, starScope, hook)
	if err != nil || !s.Distinct {
		return out, err
	}
	return distinct(out), nil
}

// project binds the select list over sc (the columns of in) as a Calc
// over in, with filter if given. The hook, if set, binds aggregates and
// window functions.
func (b *binder) project(items []ast.SelectItem, in Node, sc *scope, hook func(ast.Expr) (expr.Expr, bool, error)) (*Calc, error) {
	bb := b.with(sc)
	bb.hook = hook
	c := &Calc{In: in}
	for i, it := range items {
		if star, ok := it.X.(*ast.Star); ok {
			if sc == nil {
				return nil, errorAt(star.Pos, "* is not allowed in the select list of an aggregation")
			}
			n := 0
			for j, col := range sc.cols {
				if star.Qualifier != nil && !strings.EqualFold(col.Table, joinName(star.Qualifier)) {
					continue
				}
				c.Proj = append(c.Proj, &expr.Col{Index: j, Name: col.Name, T: col.T})
				c.Names = append(c.Names, col.Name)
				c.Quals = append(c.Quals, "")
				n++
			}
			if n == 0 {
				return nil, errorAt(star.Pos, "%s.* names no columns", joinName(star.Qualifier))
			}
			continue
		}
		e, err := bb.scalar(it.X)
		if err != nil {
			return nil, err
		}
		c.Proj = append(c.Proj, e)
		c.Names = append(c.Names, itemName(it, i))
		c.Quals = append(c.Quals, "")
	}
	seen := map[string]int{}
	for i, n := range c.Names {
		if j, dup := seen[n]; dup && n != "" {
			// Flink names duplicates name0, name1, ...: keep the first.
			c.Names[i] = n + strconv.Itoa(i-j-1)
		}
		seen[n] = i
	}
	return c, nil
}

// itemName is a select item's output name: its alias, a column's (or
// field's) own name, else EXPR$i as Flink names it.
func itemName(it ast.SelectItem, i int) string {
	if it.Alias != nil {
		return it.Alias.Name
	}
	if r, ok := it.X.(*ast.Ref); ok {
		return r.Name[len(r.Name)-1].Name
	}
	return "EXPR$" + strconv.Itoa(i)
}

func isBoolean(pos ast.Pos, where string, e expr.Expr) error {
	if k := e.Type().Kind; k != types.Boolean && k != types.Null {
		return errorAt(pos, "%s must be a BOOLEAN condition, not %s", where, e.Type())
	}
	return nil
}
