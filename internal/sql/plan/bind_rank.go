package plan

import (
	"strings"

	"github.com/weir-stream/weir/internal/sql/ast"
	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/types"
)

// ranked finds ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) in the
// select list and puts a Rank over in; the hook binds the call to the
// rank's number column. The limit comes from the WHERE of the query
// around it (see foldRanks); a rank without one is refused there.
func (b *binder) ranked(s *ast.Select, in Node) (Node, func(ast.Expr) (expr.Expr, bool, error), error) {
	var over *ast.Call
	name := ""
	for i, it := range s.Items {
		c, ok := it.X.(*ast.Call)
		if !ok || c.Over == nil {
			continue
		}
		fn := strings.ToUpper(joinName(c.Name))
		if fn != "ROW_NUMBER" {
			return nil, nil, unsupportedAt(c.Pos, fn+"() OVER is not supported: weir ranks with ROW_NUMBER()")
		}
		if over != nil {
			return nil, nil, unsupportedAt(c.Pos, "more than one ROW_NUMBER() in a select list is not supported")
		}
		over, name = c, itemName(it, i)
	}
	if over == nil {
		return in, nil, nil
	}
	w := over.Over
	if w.Ref != nil || w.Frame != nil {
		return nil, nil, unsupportedAt(w.Pos, "ROW_NUMBER() takes an inline window without a frame: OVER (PARTITION BY ... ORDER BY ...)")
	}
	if len(w.OrderBy) == 0 {
		return nil, nil, errorAt(w.Pos, "ROW_NUMBER() needs ORDER BY in its window")
	}
	sc := nodeScope(in)
	r := &Rank{In: in, RowNumber: true, Name: name}
	col := func(e ast.Expr) (int, error) {
		x, err := b.with(sc).scalar(e)
		if err != nil {
			return 0, err
		}
		c, ok := x.(*expr.Col)
		if !ok {
			return 0, unsupportedAt(e.Position(), "ROW_NUMBER() partitions and orders by columns; compute "+e.String()+" in a subquery first")
		}
		return c.Index, nil
	}
	for _, p := range w.PartitionBy {
		c, err := col(p)
		if err != nil {
			return nil, nil, err
		}
		r.Partition = append(r.Partition, c)
	}
	for _, o := range w.OrderBy {
		c, err := col(o.X)
		if err != nil {
			return nil, nil, err
		}
		// NULLs come first ascending and last descending unless written.
		nullsFirst := !o.Desc
		if o.Nulls != "" {
			nullsFirst = o.Nulls == "FIRST"
		}
		r.Order = append(r.Order, SortKey{Col: c, Desc: o.Desc, NullsFirst: nullsFirst})
	}
	var start, end int = -1, -1
	for _, p := range r.Partition {
		switch sc.cols[p].Win {
		case WindowStart:
			start = p
		case WindowEnd:
			end = p
		}
	}
	if start >= 0 && end >= 0 && !in.Updating() {
		r.Window = &[2]int{start, end}
	}
	n := len(sc.cols)
	hook := func(e ast.Expr) (expr.Expr, bool, error) {
		if e == ast.Expr(over) {
			return &expr.Col{Index: n, Name: name, T: types.Type{Kind: types.BigInt, NotNull: true}}, true, nil
		}
		return nil, false, nil
	}
	return r, hook, nil
}
