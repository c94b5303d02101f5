package plan

import (
	"strings"

	"github.com/weir-stream/weir/internal/sql/ast"
	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/types"
)

// isAggregate reports whether c calls an aggregate function.
func (b *binder) isAggregate(c *ast.Call) bool {
	if c.Over != nil {
		return false
	}
	if c.Star {
		return true
	}
	if b.cat == nil || b.cat.Aggregates == nil {
		return false
	}
	_, known, _ := b.cat.Aggregates(strings.ToUpper(joinName(c.Name)), c.Distinct, types.BigIntType)
	return known
}

func (b *binder) containsAggregate(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(x ast.Expr) bool {
		if c, ok := x.(*ast.Call); ok && b.isAggregate(c) {
			found = true
		}
		return !found
	})
	return found
}

func (b *binder) hasAggregate(s *ast.Select) bool {
	for _, it := range s.Items {
		if b.containsAggregate(it.X) {
			return true
		}
	}
	return s.Having != nil && b.containsAggregate(s.Having)
}

// pre collects the expressions an aggregation computes on its input
// before grouping: keys, arguments, filters, the time column.
type pre struct {
	exprs []expr.Expr
	index map[string]int
}

func (p *pre) add(e expr.Expr) int {
	k := e.String() + "\x00" + e.Type().String()
	if i, ok := p.index[k]; ok {
		return i
	}
	p.exprs = append(p.exprs, e)
	p.index[k] = len(p.exprs) - 1
	return len(p.exprs) - 1
}

// legacyWindows are the group window functions of GROUP BY and their
// start and end functions.
var legacyWindows = map[string]WindowKind{"TUMBLE": Tumble, "HOP": Hop, "SESSION": Session}

// grouped binds a SELECT with GROUP BY or aggregates over in: a
// projection of keys, arguments and filters, the aggregation, and the
// select list over its output. GROUP BY window_start, window_end of a
// window table function (or of an earlier window aggregation) and the
// group windows TUMBLE(...), HOP(...) and SESSION(...) make a window
// aggregation.
func (b *binder) grouped(s *ast.Select, in Node) (Node, error) {
	sc := nodeScope(in)
	// A window table function, perhaps with a WHERE on its input.
	var tvf *WindowTVF
	var tvfFilter expr.Expr
	switch n := in.(type) {
	case *WindowTVF:
		tvf = n
	case *Calc:
		if t, ok := n.In.(*WindowTVF); ok && isIdentity(n) {
			tvf, tvfFilter = t, n.Filter
		}
	}
	p := &pre{index: map[string]int{}}
	var keys []int
	keyOut := map[string]int{}
	var win *Window
	winCol := [2]int{-1, -1}
	for _, g := range s.GroupBy {
		if c, ok := g.(*ast.Call); ok {
			if kind, ok := legacyWindows[strings.ToUpper(joinName(c.Name))]; ok {
				if win != nil {
					return nil, errorAt(c.Pos, "GROUP BY has more than one window")
				}
				w, err := b.groupWindow(kind, c, sc, p)
				if err != nil {
					return nil, err
				}
				win = w
				continue
			}
		}
		e, err := b.with(sc).scalar(g)
		if err != nil {
			return nil, err
		}
		if col, ok := e.(*expr.Col); ok && sc.cols[col.Index].Win != NotWindow {
			winCol[sc.cols[col.Index].Win-1] = col.Index
			continue
		}
		keys = append(keys, p.add(e))
		keyOut[e.String()] = len(keys) - 1
	}
	var source Node = in
	switch {
	case winCol[0] >= 0 && winCol[1] >= 0 && win == nil:
		start := sc.cols[winCol[0]]
		if tvf != nil && winCol[0] >= len(tvf.In.Columns()) {
			w := tvf.Window
			w.TimeCol = p.add(&expr.Col{Index: w.TimeCol, Name: "time", T: sc.cols[w.TimeCol].T})
			win, source = &w, tvf.In
			for _, e := range append(append([]expr.Expr(nil), p.exprs...), tvfFilter) {
				bad := false
				columnsOf(e, func(i int) { bad = bad || i >= len(tvf.In.Columns()) })
				if bad {
					return nil, errorAt(s.Pos, "a window aggregation may use window_start and window_end only as GROUP BY keys")
				}
			}
		} else {
			// A window aggregation over the output of another: the same
			// windows, which end at the rows' event time plus one.
			w := *start.W
			size := w.Size
			if w.Kind == Hop {
				size = w.Slide
			}
			if w.Kind == Cumulate || w.Kind == Session {
				return nil, unsupportedAt(s.Pos, "a window aggregation over the output of a "+string(w.Kind)+" aggregation is not supported")
			}
			end := sc.cols[winCol[1]]
			win = &Window{Kind: Tumble, Size: size, Cascade: start.W.Size,
				TimeCol: p.add(&expr.Col{Index: winCol[1], Name: end.Name, T: end.T})}
		}
	case winCol[0] >= 0 || winCol[1] >= 0:
		// Only one bound: an ordinary key.
		for _, c := range winCol {
			if c >= 0 {
				e := &expr.Col{Index: c, Name: sc.cols[c].Name, T: sc.cols[c].T.Plain()}
				keys = append(keys, p.add(e))
				keyOut[e.String()] = len(keys) - 1
			}
		}
		winCol = [2]int{-1, -1}
	}
	nk := len(keys)
	nw := 0
	if win != nil {
		nw = 2
	}
	agg := &Aggregate{Window: win}
	hook := func(e ast.Expr) (expr.Expr, bool, error) {
		switch e := e.(type) {
		case *ast.Call:
			name := strings.ToUpper(joinName(e.Name))
			if b.isAggregate(e) {
				return b.aggregateCall(e, name, sc, p, agg, nk+nw)
			}
			if i := strings.LastIndexByte(name, '_'); i > 0 && win != nil {
				if _, ok := legacyWindows[name[:i]]; ok {
					switch name[i+1:] {
					case "START":
						return &expr.Col{Index: nk, Name: "window_start", T: types.Type{Kind: types.Timestamp, Precision: 3, NotNull: true}}, true, nil
					case "END":
						return &expr.Col{Index: nk + 1, Name: "window_end", T: types.Type{Kind: types.Timestamp, Precision: 3, NotNull: true}}, true, nil
					}
				}
			}
		case *ast.Literal, *ast.Interval:
			return nil, false, nil
		}
		if b.containsAggregate(e) {
			return nil, false, nil
		}
		x, err := b.with(sc).scalar(e)
		if err != nil {
			if _, isRef := e.(*ast.Ref); isRef {
				return nil, true, err
			}
			return nil, false, nil
		}
		if col, ok := x.(*expr.Col); ok && win != nil {
			for k, c := range winCol {
				if c == col.Index {
					t := col.T.Plain()
					t.NotNull = true
					return &expr.Col{Index: nk + k, Name: col.Name, T: t}, true, nil
				}
			}
		}
		if i, ok := keyOut[x.String()]; ok {
			return &expr.Col{Index: i, Name: x.String(), T: x.Type()}, true, nil
		}
		if r, isRef := e.(*ast.Ref); isRef {
			return nil, true, errorAt(r.Pos, "column %s is neither in GROUP BY nor inside an aggregate", joinName(r.Name))
		}
		return nil, false, nil
	}
	// Bind the select list and HAVING first: they add the aggregates.
	items := s.Items
	var having expr.Expr
	var post *Calc
	bindPost := func() error {
		var err error
		if post, err = b.project(items, agg, nil, hook); err != nil {
			return err
		}
		if s.Having != nil {
			bb := b.with(nil)
			bb.hook = hook
			if having, err = bb.scalar(s.Having); err != nil {
				return err
			}
			if err := isBoolean(s.Having.Position(), "HAVING", having); err != nil {
				return err
			}
		}
		return nil
	}
	if err := bindPost(); err != nil {
		return nil, err
	}
	proj := &Calc{In: source, Proj: p.exprs, Filter: tvfFilter}
	if tvf == nil || source == in {
		proj.Filter = nil
	}
	for i, e := range p.exprs {
		proj.Names = append(proj.Names, "$"+e.String())
		_ = i
	}
	agg.In = proj
	for i := range keys {
		agg.Keys = append(agg.Keys, i)
	}
	post.In = agg
	post.Filter = having
	var out Node = post
	if s.Distinct {
		out = distinct(post)
	}
	return out, nil
}

// aggregateCall adds one aggregate of the select list or HAVING and
// returns the column of its result.
func (b *binder) aggregateCall(e *ast.Call, name string, sc *scope, p *pre, agg *Aggregate, first int) (expr.Expr, bool, error) {
	call := AggCall{Fn: name, Arg: -1, Distinct: e.Distinct, Filter: -1}
	if name == "COUNT" && e.Star || name == "COUNT" && len(e.Args) == 0 {
		call.Fn = "COUNT"
	} else {
		if len(e.Args) != 1 {
			return nil, true, errorAt(e.Pos, "%s takes one argument", name)
		}
		arg, err := b.with(sc).scalar(e.Args[0])
		if err != nil {
			return nil, true, err
		}
		call.Arg, call.In = p.add(arg), arg.Type().Plain()
	}
	if e.Filter != nil {
		f, err := b.with(sc).scalar(e.Filter)
		if err != nil {
			return nil, true, err
		}
		if err := isBoolean(e.Filter.Position(), "FILTER", f); err != nil {
			return nil, true, err
		}
		call.Filter = p.add(f)
	}
	t, _, err := b.cat.Aggregates(call.Fn, call.Distinct, call.In)
	if err != nil {
		return nil, true, wrapAt(e.Pos, err)
	}
	call.T = t
	call.Name = e.String()
	for i, a := range agg.Aggs {
		if a.Fn == call.Fn && a.Arg == call.Arg && a.Distinct == call.Distinct && a.Filter == call.Filter {
			return &expr.Col{Index: first + i, Name: a.Name, T: a.T}, true, nil
		}
	}
	agg.Aggs = append(agg.Aggs, call)
	return &expr.Col{Index: first + len(agg.Aggs) - 1, Name: call.Name, T: t}, true, nil
}

// groupWindow reads a group window of GROUP BY: TUMBLE(time, size),
// HOP(time, slide, size) or SESSION(time, gap).
func (b *binder) groupWindow(kind WindowKind, c *ast.Call, sc *scope, p *pre) (*Window, error) {
	want := map[WindowKind]int{Tumble: 2, Hop: 3, Session: 2}[kind]
	if len(c.Args) != want {
		return nil, errorAt(c.Pos, "%s in GROUP BY takes %d arguments", kind, want)
	}
	t, err := b.with(sc).scalar(c.Args[0])
	if err != nil {
		return nil, err
	}
	col, ok := t.(*expr.Col)
	if !ok || col.T.Time == types.NoTime {
		return nil, errorAt(c.Args[0].Position(), "%s's first argument must be a time attribute (a column with a WATERMARK, or PROCTIME())", kind)
	}
	var ms []int64
	for _, a := range c.Args[1:] {
		iv, ok := a.(*ast.Interval)
		if !ok {
			return nil, errorAt(a.Position(), "%s takes INTERVAL literals", kind)
		}
		v, err := intervalMillis(iv)
		if err != nil {
			return nil, err
		}
		if v <= 0 {
			return nil, errorAt(a.Position(), "%s's intervals must be positive", kind)
		}
		ms = append(ms, v)
	}
	w := &Window{Kind: kind, TimeCol: p.add(col), ProcTime: col.T.Time == types.ProcTime}
	switch kind {
	case Tumble:
		w.Size = ms[0]
	case Hop:
		w.Slide, w.Size = ms[0], ms[1]
	case Session:
		w.Gap = ms[0]
	}
	return w, nil
}

// isIdentity reports whether c passes every column of its input on
// unchanged, in order (it may filter).
func isIdentity(c *Calc) bool { return expr.PassesThrough(c.Proj, len(c.In.Columns())) }
