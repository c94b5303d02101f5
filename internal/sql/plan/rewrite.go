package plan

import (
	"github.com/weir-stream/weir/internal/sql/ast"
	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/types"
)

// Optimize rewrites a bound plan into the one that runs: ranking limits
// folded in from the filters above them, adjacent projections merged
// (so filters move down to the source), and every node's columns
// pruned to those used above it (so sources read only what the query
// needs). It fails on a ranking without a limit.
func Optimize(n Node) (Node, error) {
	n = foldRanks(n)
	if err := checkRanks(n); err != nil {
		return nil, err
	}
	n = mergeCalcs(n)
	need := make([]bool, len(n.Columns()))
	for i := range need {
		need[i] = true
	}
	n, _ = prune(n, need)
	return mergeCalcs(n), nil
}

// setInputs replaces n's inputs.
func setInputs(n Node, ins []Node) {
	switch n := n.(type) {
	case *Calc:
		n.In = ins[0]
	case *WindowTVF:
		n.In = ins[0]
	case *Aggregate:
		n.In, n.cols = ins[0], nil
	case *Join:
		n.L, n.R = ins[0], ins[1]
	case *Rank:
		n.In = ins[0]
	case *Union:
		n.Ins = ins
	case *Sink:
		n.In = ins[0]
	}
}

// transform rebuilds the tree bottom up through f.
func transform(n Node, f func(Node) Node) Node {
	ins := n.Inputs()
	if len(ins) > 0 {
		out := make([]Node, len(ins))
		for i, in := range ins {
			out[i] = transform(in, f)
		}
		setInputs(n, out)
	}
	return f(n)
}

// trace follows column i of n down through projections that pass it
// on unchanged, to the node that makes it.
func trace(n Node, i int) (Node, int) {
	for {
		c, ok := n.(*Calc)
		if !ok {
			return n, i
		}
		col, ok := c.Proj[i].(*expr.Col)
		if !ok {
			return n, i
		}
		n, i = c.In, col.Index
	}
}

// foldRanks takes rownum <= N (or < N, = 1, BETWEEN ... ) conditions on
// a ranking's number out of the filter above it into its limit.
func foldRanks(n Node) Node {
	return transform(n, func(n Node) Node {
		c, ok := n.(*Calc)
		if !ok || c.Filter == nil {
			return n
		}
		var rest []expr.Expr
		for _, cond := range splitAnd(c.Filter) {
			if !foldRank(c.In, cond) {
				rest = append(rest, cond)
			}
		}
		c.Filter = andAll(rest)
		return c
	})
}

func foldRank(in Node, cond expr.Expr) bool {
	op, ok := cond.(*expr.Op)
	if !ok || len(op.Args) != 2 {
		return false
	}
	col, cok := op.Args[0].(*expr.Col)
	lit, lok := expr.Fold(op.Args[1])
	if !cok || !lok || lit.IsNull() || op.Args[1].Type().Kind != types.Int && op.Args[1].Type().Kind != types.BigInt {
		return false
	}
	src, i := trace(in, col.Index)
	r, ok := src.(*Rank)
	if !ok || !r.RowNumber || i != len(r.In.Columns()) {
		return false
	}
	v := lit.I
	// limit lowers the limit to n; a limit below 1 is -1 (0 means none).
	limit := func(n int64) {
		if n < 1 {
			n = -1
		}
		r.Limit = min(nonZero(r.Limit), n)
	}
	switch op.Op {
	case "<=":
		limit(v)
	case "<":
		limit(v - 1)
	case "=":
		r.Offset = max(r.Offset, v-1)
		limit(v)
	case ">":
		r.Offset = max(r.Offset, v)
	case ">=":
		r.Offset = max(r.Offset, v-1)
	default:
		return false
	}
	return true
}

func nonZero(v int64) int64 {
	if v == 0 {
		return 1 << 62
	}
	return v
}

func checkRanks(n Node) error {
	if r, ok := n.(*Rank); ok && (r.Limit == 0 || r.Limit >= 1<<62) {
		return unsupportedAt(ast.Pos{}, "ROW_NUMBER() "+r.Name+" needs a limit: filter on it in the query around it (WHERE "+r.Name+" <= N); weir runs a ranking as a TopN")
	} else if ok && r.Offset >= r.Limit {
		return errorAt(ast.Pos{}, "ROW_NUMBER() %s: the conditions on it contradict each other (no row number is above %d and at most %d)", r.Name, r.Offset, r.Limit)
	}
	for _, in := range n.Inputs() {
		if err := checkRanks(in); err != nil {
			return err
		}
	}
	return nil
}

// mergeCalcs merges a projection into the projection below it.
func mergeCalcs(n Node) Node {
	return transform(n, func(n Node) Node {
		outer, ok := n.(*Calc)
		if !ok {
			return n
		}
		inner, ok := outer.In.(*Calc)
		if !ok {
			return n
		}
		sub := func(c *expr.Col) expr.Expr {
			e := inner.Proj[c.Index]
			if c.T.Time == types.NoTime && e.Type().Time != types.NoTime {
				// A time attribute the outer saw as a plain timestamp.
				if col, ok := e.(*expr.Col); ok {
					d := *col
					d.T = d.T.Plain()
					return &d
				}
			}
			return e
		}
		m := &Calc{In: inner.In, Names: outer.Names, Quals: outer.Quals}
		for _, e := range outer.Proj {
			m.Proj = append(m.Proj, replace(e, sub))
		}
		var conds []expr.Expr
		if inner.Filter != nil {
			conds = append(conds, inner.Filter)
		}
		if outer.Filter != nil {
			conds = append(conds, replace(outer.Filter, sub))
		}
		m.Filter = andAll(conds)
		return m
	})
}
