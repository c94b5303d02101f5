package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weir-stream/weir/internal/sql/expr"
)

// Explain renders a plan as an indented tree, one node a line, each
// with its changelog mode: [I] for append-only, [I,UB,UA,D] for a
// changelog.
func Explain(n Node) string {
	var b strings.Builder
	explain(&b, n, "", "")
	return b.String()
}

func explain(b *strings.Builder, n Node, first, rest string) {
	mode := "[I]"
	if n.Updating() {
		mode = "[I,UB,UA,D]"
	}
	fmt.Fprintf(b, "%s%s %s\n", first, describe(n), mode)
	for _, in := range n.Inputs() {
		explain(b, in, rest+"+- ", rest+"   ")
	}
}

func names(n Node, idx []int) string {
	cols := n.Columns()
	var out []string
	for _, i := range idx {
		if i >= 0 && i < len(cols) {
			out = append(out, cols[i].Name)
		} else {
			out = append(out, fmt.Sprintf("$%d", i))
		}
	}
	return strings.Join(out, ", ")
}

func exprs(es []expr.Expr, names []string) string {
	var out []string
	for i, e := range es {
		s := e.String()
		if i < len(names) && names[i] != "" && names[i] != s {
			s += " AS " + names[i]
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// ms renders milliseconds in the largest unit that divides them.
func ms(v int64) string {
	for _, u := range []struct {
		n    int64
		name string
	}{{86_400_000, "d"}, {3_600_000, "h"}, {60_000, "min"}, {1000, "s"}} {
		if v != 0 && v%u.n == 0 {
			return strconv.FormatInt(v/u.n, 10) + u.name
		}
	}
	return strconv.FormatInt(v, 10) + "ms"
}

func (w Window) String() string {
	var s string
	switch w.Kind {
	case Tumble:
		s = fmt.Sprintf("TUMBLE(size=%s)", ms(w.Size))
	case Hop:
		s = fmt.Sprintf("HOP(slide=%s, size=%s)", ms(w.Slide), ms(w.Size))
	case Cumulate:
		s = fmt.Sprintf("CUMULATE(step=%s, size=%s)", ms(w.Step), ms(w.Size))
	case Session:
		s = fmt.Sprintf("SESSION(gap=%s)", ms(w.Gap))
	}
	if w.Cascade > 0 {
		s = fmt.Sprintf("windows of size %s from the input's window_end", ms(w.Cascade))
	}
	if w.ProcTime {
		s += " on processing time"
	}
	return s
}

func describe(n Node) string {
	switch n := n.(type) {
	case *Scan:
		return fmt.Sprintf("Scan(table=[%s], connector=[%s], fields=[%s])", n.Table.Name, n.Table.Options["connector"], names(n, identityMap(len(n.Cols))))
	case *Calc:
		s := "Calc(select=[" + exprs(n.Proj, n.Names) + "]"
		if n.Filter != nil {
			s += ", where=[" + n.Filter.String() + "]"
		}
		return s + ")"
	case *WindowTVF:
		return fmt.Sprintf("WindowTableFunction(%s, time=[%s])", n.Window, names(n.In, []int{n.Window.TimeCol}))
	case *Aggregate:
		var aggs []string
		for _, a := range n.Aggs {
			aggs = append(aggs, a.Name)
		}
		if n.Window != nil {
			return fmt.Sprintf("WindowAggregate(groupBy=[%s], window=[%s], time=[%s], select=[%s])",
				names(n.In, n.Keys), n.Window, names(n.In, []int{n.Window.TimeCol}), strings.Join(aggs, ", "))
		}
		return fmt.Sprintf("GroupAggregate(groupBy=[%s], select=[%s])", names(n.In, n.Keys), strings.Join(aggs, ", "))
	case *Join:
		s := fmt.Sprintf("Join(strategy=[%s], kind=[%s], leftKeys=[%s], rightKeys=[%s]", n.Strategy, n.Kind, names(n.L, n.LeftKeys), names(n.R, n.RightKeys))
		switch n.Strategy {
		case IntervalJoin:
			s += fmt.Sprintf(", %s - %s in [%s, %s]", names(n.R, []int{n.RightTime}), names(n.L, []int{n.LeftTime}), ms(n.Lower), ms(n.Upper))
		case WindowJoin:
			s += fmt.Sprintf(", windows=[%s | %s]", names(n.L, n.LeftWindow[:]), names(n.R, n.RightWindow[:]))
		case TemporalJoin:
			t := "event time " + names(n.L, []int{n.LeftTime})
			if n.ProcTime {
				t = "processing time"
			}
			s += ", as of " + t
		}
		if n.Cond != nil {
			s += ", where=[" + n.Cond.String() + "]"
		}
		return s + ")"
	case *Rank:
		var order []string
		for _, o := range n.Order {
			dir := "ASC"
			if o.Desc {
				dir = "DESC"
			}
			order = append(order, names(n.In, []int{o.Col})+" "+dir)
		}
		kind := "Rank"
		if d, last := n.Dedup(); d {
			kind = "Deduplicate(keep=first"
			if last {
				kind = "Deduplicate(keep=last"
			}
			return fmt.Sprintf("%s, partitionBy=[%s], orderBy=[%s])", kind, names(n.In, n.Partition), strings.Join(order, ", "))
		}
		if n.Window != nil {
			kind = "WindowRank"
		}
		return fmt.Sprintf("%s(partitionBy=[%s], orderBy=[%s], rows=[%d..%d], rowNumber=[%v])", kind, names(n.In, n.Partition), strings.Join(order, ", "), n.Offset+1, n.Limit, n.RowNumber)
	case *Union:
		return "Union(all=[true])"
	case *Values:
		return fmt.Sprintf("Values(rows=[%d])", len(n.Rows))
	case *Sink:
		if n.Table == nil {
			return "Print(fields=[" + names(n, identityMap(len(n.Columns()))) + "])"
		}
		return fmt.Sprintf("Sink(table=[%s], connector=[%s], fields=[%s])", n.Table.Name, n.Table.Options["connector"], names(n, identityMap(len(n.Columns()))))
	}
	return fmt.Sprintf("%T", n)
}
