// Package naive evaluates a logical plan (package plan) by brute force
// over in-memory tables, in batch semantics: every node's whole input is
// at hand, so a join is a filtered cross product, a grouping one pass
// over all rows, a ranking a sort. Its result is the final table a
// streaming run's changelog means: a multiset of rows. The SQL layer's
// reference tests compare it with what the pipeline writes.
//
// It is written to be obviously right rather than fast, and shares no
// code with the physical operators; it evaluates scalar expressions with
// package expr. Run it on plans from plan.BindUnoptimized so that the
// optimizer's rewrites are checked too.
//
// Assumptions: no input row is late (the tests choose watermarks that
// let every row in); ROW_NUMBER's ORDER BY has no ties within a
// partition, and FIRST_VALUE and LAST_VALUE see rows in input order, the
// orders a stream makes deterministic. An event-time temporal join (FOR
// SYSTEM_TIME AS OF a rowtime) joins a row with the version valid at its
// time, the versioned table's rows being inserts only; a processing-time
// one joins with the table's final rows, as if it were static.
package naive

import (
	"fmt"
	"slices"

	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/plan"
	"github.com/weir-stream/weir/internal/sql/row"
)

// Tables are the contents of catalog tables by table name. Each row has
// one value for every column of the table's Columns, in order; the
// values of computed columns are ignored (Eval computes them) and
// metadata columns may be left NULL.
type Tables map[string][]row.Row

// Eval returns the rows of n over the tables: its final table, each row
// an insert (row.Insert) with the values of n.Columns().
func Eval(n plan.Node, t Tables) ([]row.Row, error) {
	switch n := n.(type) {
	case *plan.Sink:
		return Eval(n.In, t)
	case *plan.Scan:
		return scan(n, t)
	case *plan.Values:
		return values(n)
	case *plan.Calc:
		in, err := Eval(n.In, t)
		if err != nil {
			return nil, err
		}
		return calc(n, in)
	case *plan.Union:
		var out []row.Row
		for _, c := range n.Ins {
			in, err := Eval(c, t)
			if err != nil {
				return nil, err
			}
			out = append(out, in...)
		}
		return out, nil
	case *plan.WindowTVF:
		in, err := Eval(n.In, t)
		if err != nil {
			return nil, err
		}
		return windowTVF(n, in)
	case *plan.Aggregate:
		in, err := Eval(n.In, t)
		if err != nil {
			return nil, err
		}
		return aggregate(n, in)
	case *plan.Join:
		l, err := Eval(n.L, t)
		if err != nil {
			return nil, err
		}
		r, err := Eval(n.R, t)
		if err != nil {
			return nil, err
		}
		return join(n, l, r)
	case *plan.Rank:
		in, err := Eval(n.In, t)
		if err != nil {
			return nil, err
		}
		return rank(n, in), nil
	}
	return nil, fmt.Errorf("naive: node %T is not supported", n)
}

// scan reads a table's rows, computes its computed columns in column
// order, and keeps the scanned columns.
func scan(n *plan.Scan, t Tables) ([]row.Row, error) {
	computed := make([]expr.Eval, len(n.Table.Columns))
	for i, c := range n.Table.Columns {
		if c.Kind == plan.Computed {
			ev, err := expr.Compile(c.Expr)
			if err != nil {
				return nil, err
			}
			computed[i] = ev
		}
	}
	var out []row.Row
	for _, r := range t[n.Table.Name] {
		if len(r.V) != len(n.Table.Columns) {
			return nil, fmt.Errorf("naive: table %s has %d columns, a row %d values", n.Table.Name, len(n.Table.Columns), len(r.V))
		}
		vals := slices.Clone(r.V)
		for i, ev := range computed {
			if ev != nil {
				v, err := ev(vals)
				if err != nil {
					return nil, err
				}
				vals[i] = v
			}
		}
		o := make([]row.Value, len(n.Cols))
		for i, c := range n.Cols {
			o[i] = vals[c]
		}
		out = append(out, row.New(o...))
	}
	return out, nil
}

func values(n *plan.Values) ([]row.Row, error) {
	var out []row.Row
	for _, exprs := range n.Rows {
		o := make([]row.Value, len(exprs))
		for i, e := range exprs {
			ev, err := expr.Compile(e)
			if err != nil {
				return nil, err
			}
			if o[i], err = ev(nil); err != nil {
				return nil, err
			}
		}
		out = append(out, row.New(o...))
	}
	return out, nil
}

// calc keeps the rows its filter holds for and projects them.
func calc(n *plan.Calc, in []row.Row) ([]row.Row, error) {
	keep := func([]row.Value) (bool, error) { return true, nil }
	if n.Filter != nil {
		var err error
		if keep, err = expr.CompilePredicate(n.Filter); err != nil {
			return nil, err
		}
	}
	proj := make([]expr.Eval, len(n.Proj))
	for i, e := range n.Proj {
		var err error
		if proj[i], err = expr.Compile(e); err != nil {
			return nil, err
		}
	}
	var out []row.Row
	for _, r := range in {
		ok, err := keep(r.V)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		o := make([]row.Value, len(proj))
		for i, ev := range proj {
			if o[i], err = ev(r.V); err != nil {
				return nil, err
			}
		}
		out = append(out, row.New(o...))
	}
	return out, nil
}

// rank numbers each partition's rows by the sort keys (ROW_NUMBER) and
// keeps the numbers Offset+1 to Limit when the node has a limit.
func rank(n *plan.Rank, in []row.Row) []row.Row {
	part := slices.Clone(n.Partition)
	if n.Window != nil {
		part = append(part, n.Window[0], n.Window[1])
	}
	groups, order := groupBy(in, part)
	var out []row.Row
	for _, k := range order {
		rows := slices.Clone(groups[k])
		slices.SortStableFunc(rows, func(a, b row.Row) int {
			for _, o := range n.Order {
				if c := compareSort(a.V[o.Col], b.V[o.Col], o); c != 0 {
					return c
				}
			}
			return 0
		})
		for i, r := range rows {
			rn := int64(i + 1)
			if n.Limit > 0 && (rn <= n.Offset || rn > n.Limit) {
				continue
			}
			vals := slices.Clone(r.V)
			if n.RowNumber {
				vals = append(vals, row.BigInt(rn))
			}
			out = append(out, row.New(vals...))
		}
	}
	return out
}

// compareSort orders two values by one sort key: NULLs first or last as
// the key says, the others ascending or descending.
func compareSort(a, b row.Value, o plan.SortKey) int {
	if an, bn := a.IsNull(), b.IsNull(); an || bn {
		if an == bn {
			return 0
		}
		if an == o.NullsFirst {
			return -1
		}
		return 1
	}
	c := row.Compare(a, b)
	if o.Desc {
		c = -c
	}
	return c
}

// groupBy splits rows by their values at cols (NULLs equal), keeping
// the groups in order of first appearance and each group's rows in
// input order.
func groupBy(rows []row.Row, cols []int) (map[string][]row.Row, []string) {
	groups := map[string][]row.Row{}
	var order []string
	for _, r := range rows {
		k := string(row.Key(nil, r, cols))
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	return groups, order
}

// nulls returns n NULLs.
func nulls(n int) []row.Value { return make([]row.Value, n) }

// sqlEqual is = on two values of one type: NULL equals nothing.
func sqlEqual(a, b row.Value) bool {
	return !a.IsNull() && !b.IsNull() && row.Compare(a, b) == 0
}

// floorMod is the non-negative remainder of a by b.
func floorMod(a, b int64) int64 { return ((a % b) + b) % b }
