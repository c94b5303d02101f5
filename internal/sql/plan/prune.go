package plan

import (
	"slices"

	"github.com/weir-stream/weir/internal/sql/expr"
)

// prune returns n producing at least the columns need marks, and the
// map from n's old column indexes to its new ones (-1: dropped).
// Projections drop what no one reads, scans read only what is left;
// other nodes keep their outputs and ask their inputs for what they
// use.
func prune(n Node, need []bool) (Node, []int) {
	switch n := n.(type) {
	case *Scan:
		var cols []int
		m := make([]int, len(n.Cols))
		for i, c := range n.Cols {
			m[i] = -1
			// An upsert table's rows are normalized by its key.
			if need[i] || n.Table.Updating() && slices.Contains(n.Table.PrimaryKey, c) {
				m[i] = len(cols)
				cols = append(cols, c)
			}
		}
		n.Cols = cols
		return n, m
	case *Calc:
		in := make([]bool, len(n.In.Columns()))
		mark := func(e expr.Expr) { columnsOf(e, func(i int) { in[i] = true }) }
		mark(n.Filter)
		for i, e := range n.Proj {
			if need[i] {
				mark(e)
			}
		}
		child, cm := prune(n.In, in)
		n.In = child
		if n.Filter != nil {
			n.Filter = remap(n.Filter, cm)
		}
		m := make([]int, len(n.Proj))
		var proj []expr.Expr
		var names, quals []string
		for i, e := range n.Proj {
			m[i] = -1
			if !need[i] {
				continue
			}
			m[i] = len(proj)
			proj = append(proj, remap(e, cm))
			names = append(names, n.Names[i])
			if n.Quals != nil {
				quals = append(quals, n.Quals[i])
			}
		}
		n.Proj, n.Names = proj, names
		if n.Quals != nil {
			n.Quals = quals
		}
		return n, m
	case *WindowTVF:
		nIn := len(n.In.Columns())
		in := append([]bool(nil), need[:nIn]...)
		in[n.Window.TimeCol] = true
		for _, k := range n.Window.Keys {
			in[k] = true
		}
		child, cm := prune(n.In, in)
		n.In = child
		n.Window.TimeCol = cm[n.Window.TimeCol]
		n.Window.Keys = remapAll(n.Window.Keys, cm)
		newN := len(child.Columns())
		m := append([]int(nil), cm...)
		for k := range 3 {
			m = append(m, newN+k)
		}
		return n, m
	case *Aggregate:
		in := make([]bool, len(n.In.Columns()))
		for _, k := range n.Keys {
			in[k] = true
		}
		for _, a := range n.Aggs {
			if a.Arg >= 0 {
				in[a.Arg] = true
			}
			if a.Filter >= 0 {
				in[a.Filter] = true
			}
		}
		if n.Window != nil {
			in[n.Window.TimeCol] = true
			for _, k := range n.Window.Keys {
				in[k] = true
			}
		}
		child, cm := prune(n.In, in)
		n.In, n.cols = child, nil
		n.Keys = remapAll(n.Keys, cm)
		for i := range n.Aggs {
			if n.Aggs[i].Arg >= 0 {
				n.Aggs[i].Arg = cm[n.Aggs[i].Arg]
			}
			if n.Aggs[i].Filter >= 0 {
				n.Aggs[i].Filter = cm[n.Aggs[i].Filter]
			}
		}
		if n.Window != nil {
			w := *n.Window
			w.TimeCol = cm[w.TimeCol]
			w.Keys = remapAll(w.Keys, cm)
			n.Window = &w
		}
		return n, identityMap(len(n.Columns()))
	case *Join:
		nl := len(n.L.Columns())
		l := append([]bool(nil), need[:nl]...)
		r := append([]bool(nil), need[nl:]...)
		for _, k := range n.LeftKeys {
			l[k] = true
		}
		for _, k := range n.RightKeys {
			r[k] = true
		}
		switch n.Strategy {
		case IntervalJoin:
			l[n.LeftTime], r[n.RightTime] = true, true
		case TemporalJoin:
			l[n.LeftTime] = true
		case WindowJoin:
			l[n.LeftWindow[0]], l[n.LeftWindow[1]] = true, true
			r[n.RightWindow[0]], r[n.RightWindow[1]] = true, true
		}
		if n.Strategy == TemporalJoin && !n.ProcTime {
			if s, ok := n.R.(*Scan); ok && s.Table.RowTime >= 0 {
				for i, c := range s.Cols {
					if c == s.Table.RowTime {
						r[i] = true
					}
				}
			}
		}
		columnsOf(n.Cond, func(i int) {
			if i < nl {
				l[i] = true
			} else {
				r[i-nl] = true
			}
		})
		lc, lm := prune(n.L, l)
		rc, rm := prune(n.R, r)
		n.L, n.R = lc, rc
		newL := len(lc.Columns())
		m := append([]int(nil), lm...)
		for _, x := range rm {
			if x >= 0 {
				x += newL
			}
			m = append(m, x)
		}
		n.LeftKeys, n.RightKeys = remapAll(n.LeftKeys, lm), remapAll(n.RightKeys, rm)
		n.LeftTime = remapOne(n.LeftTime, lm)
		n.RightTime = remapOne(n.RightTime, rm)
		n.LeftWindow = [2]int{remapOne(n.LeftWindow[0], lm), remapOne(n.LeftWindow[1], lm)}
		n.RightWindow = [2]int{remapOne(n.RightWindow[0], rm), remapOne(n.RightWindow[1], rm)}
		if n.Cond != nil {
			n.Cond = remap(n.Cond, m)
		}
		return n, m
	case *Rank:
		nIn := len(n.In.Columns())
		in := append([]bool(nil), need[:nIn]...)
		for _, p := range n.Partition {
			in[p] = true
		}
		for _, o := range n.Order {
			in[o.Col] = true
		}
		child, cm := prune(n.In, in)
		n.In = child
		n.Partition = remapAll(n.Partition, cm)
		for i := range n.Order {
			n.Order[i].Col = cm[n.Order[i].Col]
		}
		if n.Window != nil {
			n.Window = &[2]int{cm[n.Window[0]], cm[n.Window[1]]}
		}
		m := append([]int(nil), cm...)
		if n.RowNumber {
			if need[nIn] {
				m = append(m, len(child.Columns()))
			} else {
				n.RowNumber = false
				m = append(m, -1)
			}
		}
		return n, m
	}
	// Union, Values, Sink: every input column.
	ins := n.Inputs()
	out := make([]Node, len(ins))
	for i, in := range ins {
		all := make([]bool, len(in.Columns()))
		for j := range all {
			all[j] = true
		}
		out[i], _ = prune(in, all)
	}
	if len(ins) > 0 {
		setInputs(n, out)
	}
	return n, identityMap(len(n.Columns()))
}

func identityMap(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i
	}
	return m
}

func remapAll(xs []int, m []int) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = m[x]
	}
	return out
}

func remapOne(x int, m []int) int {
	if x < 0 || x >= len(m) {
		return x
	}
	return m[x]
}
