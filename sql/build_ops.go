package sql

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/plan"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
	"github.com/weir-stream/weir/sql/internal/exec"
	"github.com/weir-stream/weir/sql/internal/tables"
)

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

var windowKinds = map[plan.WindowKind]exec.WindowKind{plan.Tumble: exec.Tumble, plan.Hop: exec.Hop, plan.Cumulate: exec.Cumulate, plan.Session: exec.Session}

func windowSpec(w plan.Window, name string) exec.WindowSpec {
	s := exec.WindowSpec{Kind: windowKinds[w.Kind], Size: ms(w.Size), Offset: ms(w.Offset), Gap: ms(w.Gap),
		Time: w.TimeCol, ProcTime: w.ProcTime, Keys: w.Keys, Name: name}
	switch w.Kind {
	case plan.Hop:
		s.Step = ms(w.Slide)
	case plan.Cumulate:
		s.Step = ms(w.Step)
	}
	return s
}

func aggSpecs(calls []plan.AggCall) []exec.AggSpec {
	out := make([]exec.AggSpec, len(calls))
	for i, a := range calls {
		out[i] = exec.AggSpec{Fn: a.Fn, Arg: a.Arg, Distinct: a.Distinct, Filter: a.Filter, In: a.In}
	}
	return out
}

func (b *builder) aggregate(n *plan.Aggregate) (stream, error) {
	in, err := b.node(n.In)
	if err != nil {
		return stream{}, err
	}
	aggs := aggSpecs(n.Aggs)
	if n.Window == nil {
		if err := exec.CheckGroupAggs(aggs, !n.In.Updating()); err != nil {
			return stream{}, err
		}
		return exec.GroupAggregate(in, n.Keys, aggs, exec.GroupOptions{Name: b.name("group-aggregate"), StateTTL: b.script.ttl,
			AppendOnly: !n.In.Updating(), IntKeys: integerKeys(n.In.Columns(), n.Keys)}), nil
	}
	spec := windowSpec(*n.Window, b.name("window-aggregate"))
	spec.Keys, spec.Aggs, spec.Updating = n.Keys, aggs, n.In.Updating()
	out, err := exec.WindowAggregate(in, spec)
	if err != nil || n.Window.Cascade == 0 {
		return out, err
	}
	// A window aggregation over an earlier one's rows: its tumbling
	// windows of the earlier slide found each window by its end; the
	// window's start is the earlier window's.
	start, size := len(n.Keys), n.Window.Cascade
	return weir.Map(out, func(r row.Row) row.Row {
		v := slices.Clone(r.V) // rows are not changed in place (row.Row)
		v[start] = row.Timestamp(v[start+1].I - size)
		return row.Row{Op: r.Op, V: v}
	}, weir.Name(b.name("window-bounds"))), nil
}

var joinKinds = map[plan.JoinKind]exec.JoinKind{plan.Inner: exec.InnerJoin, plan.Left: exec.LeftJoin, plan.Right: exec.RightJoin, plan.Full: exec.FullJoin}

func (b *builder) join(n *plan.Join) (stream, error) {
	spec := exec.JoinSpec{Kind: joinKinds[n.Kind], LeftKeys: n.LeftKeys, RightKeys: n.RightKeys,
		LeftWidth: len(n.L.Columns()), RightWidth: len(n.R.Columns()), StateTTL: b.script.ttl,
		LeftAppendOnly: !n.L.Updating(), RightAppendOnly: !n.R.Updating()}
	if len(n.LeftKeys) == 1 {
		spec.IntKey = integer(n.L.Columns()[n.LeftKeys[0]].T) && integer(n.R.Columns()[n.RightKeys[0]].T)
	}
	var err error
	if n.Cond != nil {
		if spec.Cond, err = expr.CompilePredicate(n.Cond); err != nil {
			return stream{}, err
		}
	}
	if n.Strategy == plan.RegularJoin {
		if s, ok, err := b.joinOfScans(n, spec); ok {
			return s, err
		}
	}
	l, err := b.node(n.L)
	if err != nil {
		return stream{}, err
	}
	if n.Strategy == plan.TemporalJoin && n.ProcTime {
		if s, ok := n.R.(*plan.Scan); ok && n.R.Columns() != nil {
			if src, err := b.boundedTable(s); err == nil && src != nil {
				spec.Name = b.name("lookup-join")
				return exec.LookupJoin(l, src, spec), nil
			}
		}
	}
	r, err := b.node(n.R)
	if err != nil {
		return stream{}, err
	}
	switch n.Strategy {
	case plan.IntervalJoin:
		spec.LeftTime, spec.RightTime, spec.Lower, spec.Upper = n.LeftTime, n.RightTime, ms(n.Lower), ms(n.Upper)
		spec.Name = b.name("interval-join")
		return exec.IntervalJoin(l, r, spec), nil
	case plan.WindowJoin:
		spec.LeftWindow, spec.RightWindow = n.LeftWindow, n.RightWindow
		spec.Name = b.name("window-join")
		return exec.WindowJoin(l, r, spec), nil
	case plan.TemporalJoin:
		spec.LeftTime = n.LeftTime
		if n.ProcTime {
			spec.Name = b.name("temporal-join")
			return exec.TemporalProctimeJoin(l, r, spec), nil
		}
		s := n.R.(*plan.Scan)
		spec.RightTime = -1
		for i, c := range s.Cols {
			if c == s.Table.RowTime {
				spec.RightTime = i
			}
		}
		if spec.RightTime < 0 {
			return stream{}, fmt.Errorf("temporal join: table %s has no watermark: an event-time temporal join needs a versioned table with a rowtime", s.Table.Name)
		}
		spec.Name = b.name("temporal-join")
		return exec.TemporalRowtimeJoin(l, r, spec), nil
	}
	spec.Name = b.name("join")
	return exec.RegularJoin(l, r, spec), nil
}

// integer reports whether t is an integer type: its values are int64s.
func integer(t types.Type) bool { return t.Kind == types.Int || t.Kind == types.BigInt }

// integerKeys reports whether key columns keys of cols are one or two,
// all of integer types: an operator keyed by them can key by their values
// (exec's integer keys).
func integerKeys(cols []plan.Column, keys []int) bool {
	if len(keys) == 0 || len(keys) > 2 {
		return false
	}
	for _, k := range keys {
		if !integer(cols[k].T) {
			return false
		}
	}
	return true
}

// boundedTable returns a function that reads a bounded table's scanned
// columns in full, for a lookup join; nil if the table is unbounded.
func (b *builder) boundedTable(s *plan.Scan) (func() ([]row.Row, error), error) {
	for _, c := range s.Cols {
		if s.Table.Columns[c].Kind == plan.Computed {
			return nil, nil
		}
	}
	src, err := tables.NewSource(tableOf(s.Table), s.Cols)
	if err != nil || !src.Bounded {
		return nil, err
	}
	return func() ([]row.Row, error) { return tables.ReadAll(context.Background(), src.Source, 10_000_000) }, nil
}

func (b *builder) rank(n *plan.Rank) (stream, error) {
	in, err := b.node(n.In)
	if err != nil {
		return stream{}, err
	}
	if dedup, last := n.Dedup(); dedup {
		col := n.Order[0].Col
		if n.In.Columns()[col].T.Time == types.ProcTime {
			col = -1
		}
		return exec.Deduplicate(in, exec.DedupSpec{Keys: n.Partition, IntKeys: integerKeys(n.In.Columns(), n.Partition),
			TimeCol: col, KeepLast: last, WithRowNumber: n.RowNumber, StateTTL: b.script.ttl, Name: b.name("deduplicate")}), nil
	}
	spec := exec.RankSpec{PartitionKeys: n.Partition, IntKeys: integerKeys(n.In.Columns(), n.Partition),
		Start: n.Offset + 1, End: n.Limit, WithRowNumber: n.RowNumber,
		Updating: n.In.Updating(), StateTTL: b.script.ttl}
	for _, o := range n.Order {
		spec.Order = append(spec.Order, exec.RankKey{Col: o.Col, Desc: o.Desc, NullsLast: !o.NullsFirst})
	}
	if n.Window != nil {
		spec.WindowStart, spec.WindowEnd = n.Window[0], n.Window[1]
		spec.Name = b.name("window-rank")
		return exec.WindowRank(in, spec), nil
	}
	spec.Name = b.name("rank")
	return exec.Rank(in, spec), nil
}
