package naive

import (
	"slices"

	"github.com/weir-stream/weir/internal/sql/plan"
	"github.com/weir-stream/weir/internal/sql/row"
)

// span is one window, [start, end) in epoch milliseconds.
type span struct{ start, end int64 }

// windowsOf returns the TUMBLE, HOP or CUMULATE windows time t is in.
func windowsOf(w plan.Window, t int64) []span {
	switch w.Kind {
	case plan.Tumble:
		s := t - floorMod(t-w.Offset, w.Size)
		return []span{{s, s + w.Size}}
	case plan.Hop:
		var out []span
		for s := t - floorMod(t-w.Offset, w.Slide); s > t-w.Size; s -= w.Slide {
			out = append(out, span{s, s + w.Size})
		}
		return out
	case plan.Cumulate:
		var out []span
		s := t - floorMod(t-w.Offset, w.Size)
		for e := s + w.Step; e <= s+w.Size; e += w.Step {
			if t < e {
				out = append(out, span{s, e})
			}
		}
		return out
	}
	return nil
}

// assign pairs each row having a time with its windows: for a session,
// the rows of one partition (by keys) whose times are less than the gap
// apart share one window from the first time to the last plus the gap.
func assign(w plan.Window, rows []row.Row, keys []int, each func(r row.Row, s span)) {
	if w.Cascade > 0 {
		// The rows of an earlier window aggregation: their window ends at
		// the time column's value.
		for _, r := range rows {
			if end := r.V[w.TimeCol]; !end.IsNull() {
				each(r, span{end.I - w.Cascade, end.I})
			}
		}
		return
	}
	if w.Kind != plan.Session {
		for _, r := range rows {
			if t := r.V[w.TimeCol]; !t.IsNull() {
				for _, s := range windowsOf(w, t.I) {
					each(r, s)
				}
			}
		}
		return
	}
	groups, order := groupBy(rows, keys)
	for _, k := range order {
		var timed []row.Row
		for _, r := range groups[k] {
			if !r.V[w.TimeCol].IsNull() {
				timed = append(timed, r)
			}
		}
		slices.SortStableFunc(timed, func(a, b row.Row) int { return row.Compare(a.V[w.TimeCol], b.V[w.TimeCol]) })
		for i := 0; i < len(timed); {
			s := span{timed[i].V[w.TimeCol].I, timed[i].V[w.TimeCol].I + w.Gap}
			j := i + 1
			for j < len(timed) && timed[j].V[w.TimeCol].I < s.end {
				s.end = max(s.end, timed[j].V[w.TimeCol].I+w.Gap)
				j++
			}
			for _, r := range timed[i:j] {
				each(r, s)
			}
			i = j
		}
	}
}

// windowTVF appends window_start, window_end and window_time to each
// row, once per window it is in.
func windowTVF(n *plan.WindowTVF, in []row.Row) ([]row.Row, error) {
	var out []row.Row
	assign(n.Window, in, n.Window.Keys, func(r row.Row, s span) {
		vals := append(slices.Clone(r.V), row.Timestamp(s.start), row.Timestamp(s.end), row.Timestamp(s.end-1))
		out = append(out, row.New(vals...))
	})
	return out, nil
}

// aggregate groups the rows by the keys (and, for a window aggregation,
// by window) and computes the aggregates of each group. A group exists
// only if it has rows: a global aggregation of no rows gives no row, as
// a stream's does.
func aggregate(n *plan.Aggregate, in []row.Row) ([]row.Row, error) {
	type group struct {
		key  []row.Value
		win  *span
		rows []row.Row
	}
	var groups []*group
	byKey := map[string]*group{}
	add := func(r row.Row, win *span) {
		k := row.Key(nil, r, n.Keys)
		if win != nil {
			k = row.AppendValue(row.AppendValue(k, row.Timestamp(win.start)), row.Timestamp(win.end))
		}
		g, ok := byKey[string(k)]
		if !ok {
			g = &group{win: win}
			for _, c := range n.Keys {
				g.key = append(g.key, r.V[c])
			}
			byKey[string(k)] = g
			groups = append(groups, g)
		}
		g.rows = append(g.rows, r)
	}
	if n.Window == nil {
		for _, r := range in {
			add(r, nil)
		}
	} else {
		assign(*n.Window, in, n.Keys, func(r row.Row, s span) { add(r, &s) })
	}
	var out []row.Row
	for _, g := range groups {
		vals := slices.Clone(g.key)
		if g.win != nil {
			vals = append(vals, row.Timestamp(g.win.start), row.Timestamp(g.win.end))
		}
		for _, a := range n.Aggs {
			v, err := aggregateCall(a, g.rows)
			if err != nil {
				return nil, err
			}
			vals = append(vals, v)
		}
		out = append(out, row.New(vals...))
	}
	return out, nil
}
