package plan

import (
	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/types"
)

func (n *Scan) Columns() []Column {
	out := make([]Column, len(n.Cols))
	for i, c := range n.Cols {
		tc := n.Table.Columns[c]
		out[i] = Column{Name: tc.Name, Table: n.Alias, T: tc.T}
	}
	return out
}
func (n *Scan) Inputs() []Node { return nil }
func (n *Scan) Updating() bool { return n.Table.Updating() }

func (n *Calc) Columns() []Column {
	out := make([]Column, len(n.Proj))
	var inCols []Column
	for i, e := range n.Proj {
		out[i] = Column{Name: n.Names[i], T: e.Type()}
		if c, ok := e.(*expr.Col); ok {
			if inCols == nil {
				inCols = n.In.Columns()
			}
			in := inCols[c.Index]
			out[i].Win, out[i].W = in.Win, in.W
		}
		if n.Quals != nil {
			out[i].Table = n.Quals[i]
		}
	}
	return out
}
func (n *Calc) Inputs() []Node { return []Node{n.In} }
func (n *Calc) Updating() bool { return n.In.Updating() }

func windowColumns(w Window, time types.Type) []Column {
	ts := types.Type{Kind: types.Timestamp, Precision: 3, NotNull: true}
	wt := ts
	if !w.ProcTime {
		wt.Time = types.RowTime
	}
	return []Column{{Name: "window_start", T: ts, Win: WindowStart, W: &w}, {Name: "window_end", T: ts, Win: WindowEnd, W: &w}, {Name: "window_time", T: wt}}
}

func (n *WindowTVF) Columns() []Column {
	in := n.In.Columns()
	return append(append([]Column(nil), in...), windowColumns(n.Window, in[n.Window.TimeCol].T)...)
}
func (n *WindowTVF) Inputs() []Node { return []Node{n.In} }
func (n *WindowTVF) Updating() bool { return false }

func (n *Aggregate) Columns() []Column {
	if n.cols != nil {
		return n.cols
	}
	in := n.In.Columns()
	var out []Column
	for _, k := range n.Keys {
		out = append(out, in[k])
	}
	if n.Window != nil {
		out = append(out, windowColumns(*n.Window, in[n.Window.TimeCol].T)[:2]...)
	}
	for _, a := range n.Aggs {
		out = append(out, Column{Name: a.Name, T: a.T})
	}
	n.cols = out
	return out
}
func (n *Aggregate) Inputs() []Node { return []Node{n.In} }

// Updating: a window aggregation emits once per window, and a grouping
// without aggregates of append-only input (SELECT DISTINCT) inserts each
// group once.
func (n *Aggregate) Updating() bool {
	return n.Window == nil && (len(n.Aggs) > 0 || n.In.Updating())
}

func (n *Join) Columns() []Column {
	l, r := n.L.Columns(), n.R.Columns()
	out := make([]Column, 0, len(l)+len(r))
	for _, c := range l {
		if n.Kind == Right || n.Kind == Full {
			c.T = c.T.Nullable()
		}
		if n.Strategy == RegularJoin || n.Strategy == TemporalJoin && n.ProcTime {
			c.T.Time = timeAfterRegularJoin(c.T.Time)
		}
		out = append(out, c)
	}
	for _, c := range r {
		if n.Kind == Left || n.Kind == Full {
			c.T = c.T.Nullable()
		}
		if n.Strategy != IntervalJoin && n.Strategy != WindowJoin {
			c.T.Time = timeAfterRegularJoin(c.T.Time)
		}
		out = append(out, c)
	}
	return out
}

// timeAfterRegularJoin: a regular join's output rows are not ordered by
// either side's event time, so rowtime attributes become plain
// timestamps (as Flink materializes them).
func timeAfterRegularJoin(t types.TimeAttr) types.TimeAttr {
	if t == types.RowTime {
		return types.NoTime
	}
	return t
}

func (n *Join) Inputs() []Node { return []Node{n.L, n.R} }
func (n *Join) Updating() bool {
	switch n.Strategy {
	case RegularJoin:
		return n.L.Updating() || n.R.Updating() || n.Kind != Inner
	case TemporalJoin:
		return n.L.Updating()
	}
	return false
}

func (n *Rank) Columns() []Column {
	out := append([]Column(nil), n.In.Columns()...)
	if n.RowNumber {
		out = append(out, Column{Name: n.Name, T: types.Type{Kind: types.BigInt, NotNull: true}})
	}
	return out
}
func (n *Rank) Inputs() []Node { return []Node{n.In} }

// Updating: a window TopN emits once per window, and deduplication
// keeping the first row in processing time emits each key's first row
// once; every other TopN updates, deduplication keeping the first row
// by event time too (a row with an earlier rowtime arriving later
// replaces the kept one, as in Flink).
func (n *Rank) Updating() bool {
	if n.Window != nil {
		return false
	}
	return !(n.isDedup() && !n.Order[0].Desc && !n.In.Updating() &&
		n.In.Columns()[n.Order[0].Col].T.Time == types.ProcTime)
}

// isDedup reports whether the ranking is Flink's deduplication: the
// first row by a time attribute per partition. Within windows it is not:
// a window TopN of one row emits each window's row once, at its end.
func (n *Rank) isDedup() bool {
	if n.Limit != 1 || n.Offset != 0 || len(n.Order) != 1 || n.RowNumber || n.Window != nil {
		return false
	}
	return n.In.Columns()[n.Order[0].Col].T.Time != types.NoTime
}

// Dedup reports whether the ranking keeps one row per partition by a
// time attribute (Flink's deduplication), and whether it keeps the last.
func (n *Rank) Dedup() (dedup, keepLast bool) {
	return n.isDedup(), n.isDedup() && n.Order[0].Desc
}

func (n *Union) Columns() []Column { return n.Ins[0].Columns() }
func (n *Union) Inputs() []Node    { return n.Ins }
func (n *Union) Updating() bool {
	for _, in := range n.Ins {
		if in.Updating() {
			return true
		}
	}
	return false
}

func (n *Values) Columns() []Column { return n.cols }
func (n *Values) Inputs() []Node    { return nil }
func (n *Values) Updating() bool    { return false }

func (n *Sink) Columns() []Column { return n.In.Columns() }
func (n *Sink) Inputs() []Node    { return []Node{n.In} }
func (n *Sink) Updating() bool    { return n.In.Updating() }
