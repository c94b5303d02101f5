package plan

import (
	"fmt"

	"github.com/weir-stream/weir/internal/sql/expr"
)

// Remap returns e reading column m[i] where it read column i.
func Remap(e expr.Expr, m []int) expr.Expr { return remap(e, m) }

// Replace returns e with every column replaced by what col returns for
// it, which must have the column's type.
func Replace(e expr.Expr, col func(*expr.Col) expr.Expr) expr.Expr { return replace(e, col) }

// Unbounded names the operators of a plan whose state grows with the
// keys or rows they see and is never dropped, each with what bounds it:
// regular joins, group aggregations, rankings and deduplications that
// are not per window. (Flink runs them too; its users bound them with
// table.exec.state.ttl.)
func Unbounded(n Node) []string {
	var out []string
	var walk func(Node)
	walk = func(n Node) {
		for _, in := range n.Inputs() {
			walk(in)
		}
		switch n := n.(type) {
		case *Join:
			if n.Strategy == RegularJoin {
				out = append(out, fmt.Sprintf("%s keeps every row of both inputs for as long as the job runs: join on a window (a window join) or on a time range (an interval join), or SET 'table.exec.state.ttl'", describe(n)))
			}
		case *Aggregate:
			if n.Window == nil {
				out = append(out, fmt.Sprintf("%s keeps a result per group key for as long as the job runs: group by a window (TUMBLE, HOP, CUMULATE, SESSION), or SET 'table.exec.state.ttl'", describe(n)))
			}
		case *Rank:
			if n.Window == nil {
				out = append(out, fmt.Sprintf("%s keeps rows per partition key for as long as the job runs: rank per window (PARTITION BY window_start, window_end), or SET 'table.exec.state.ttl'", describe(n)))
			}
		}
	}
	walk(n)
	return out
}

// Columns calls f with the index of every column e reads.
func Columns(e expr.Expr, f func(int)) { columnsOf(e, f) }

// Deterministic reports whether n gives the same rows whenever it runs
// over the same input: no expression in it reads processing time
// (PROCTIME()) or calls a function registered from Go, which may keep
// its own state or read the clock. Two occurrences of a deterministic
// subplan may share one run.
func Deterministic(n Node) bool {
	ok := true
	var visit func(e expr.Expr)
	visit = func(e expr.Expr) {
		switch e.(type) {
		case nil:
			return
		case *expr.ProcTime, *expr.UDF:
			ok = false
			return
		}
		for _, c := range expr.Children(e) {
			visit(c)
		}
	}
	var walk func(Node)
	walk = func(n Node) {
		switch n := n.(type) {
		case *Scan:
			for _, c := range n.Cols {
				visit(n.Table.Columns[c].Expr)
			}
		case *Calc:
			visit(n.Filter)
			for _, e := range n.Proj {
				visit(e)
			}
		case *Join:
			visit(n.Cond)
		case *Values:
			for _, r := range n.Rows {
				for _, e := range r {
					visit(e)
				}
			}
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(n)
	return ok
}
