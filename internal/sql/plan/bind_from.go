package plan

import (
	"strings"

	"github.com/weir-stream/weir/internal/sql/ast"
	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/types"
)

// from binds a FROM item. An inner join takes the WHERE conditions
// (pushed into it and below it); rest is what is left of where.
func (b *binder) from(t ast.TableExpr, where ast.Expr) (n Node, rest ast.Expr, err error) {
	if j, ok := t.(*ast.Join); ok {
		return b.join(j, where)
	}
	n, err = b.table(t)
	return n, where, err
}

func (b *binder) table(t ast.TableExpr) (Node, error) {
	switch t := t.(type) {
	case *ast.TableName:
		if t.SystemTime != nil {
			return nil, errorAt(t.Pos, "FOR SYSTEM_TIME AS OF is allowed only on the right side of a join")
		}
		name := joinName(t.Name)
		alias := t.Name[len(t.Name)-1].Name
		var cols []string
		if t.Alias != nil {
			alias = t.Alias.Name.Name
			for _, c := range t.Alias.Columns {
				cols = append(cols, c.Name)
			}
		}
		n, err := b.named(t.Pos, name, alias)
		if err != nil || cols == nil {
			return n, err
		}
		return renamed(n, alias, cols, t.Pos)
	case *ast.DerivedTable:
		if t.Lateral {
			return nil, unsupportedAt(t.Pos, "LATERAL subqueries are not supported")
		}
		n, err := b.query(t.Query)
		if err != nil {
			return nil, err
		}
		if t.Alias == nil {
			return n, nil
		}
		var cols []string
		for _, c := range t.Alias.Columns {
			cols = append(cols, c.Name)
		}
		return renamed(n, t.Alias.Name.Name, cols, t.Pos)
	case *ast.TableFunc:
		n, err := b.windowTVF(t.Call)
		if err != nil || t.Alias == nil {
			return n, err
		}
		return renamed(n, t.Alias.Name.Name, nil, t.Pos)
	case *ast.Join:
		n, _, err := b.join(t, nil)
		return n, err
	}
	return nil, unsupportedAt(t.Position(), "this FROM item is not supported")
}

// named returns the node of a WITH query, view or table by name.
func (b *binder) named(pos ast.Pos, name, alias string) (Node, error) {
	if v, ok := lookup(b.ctes, name); ok {
		return b.viewNode(v, alias)
	}
	if b.cat != nil {
		if v, ok := lookup(b.cat.views, name); ok {
			return b.viewNode(v, alias)
		}
		if t, ok := b.cat.Table(name); ok {
			s := &Scan{Table: t, Alias: alias}
			for i := range t.Columns {
				s.Cols = append(s.Cols, i)
			}
			return s, nil
		}
	}
	return nil, errorAt(pos, "table or view %s not found", name)
}

// conjuncts splits an AND tree of the syntax.
func conjuncts(e ast.Expr) []ast.Expr {
	if e == nil {
		return nil
	}
	if bin, ok := e.(*ast.Binary); ok && bin.Op == "AND" {
		return append(conjuncts(bin.L), conjuncts(bin.R)...)
	}
	return []ast.Expr{e}
}

var joinKinds = map[ast.JoinKind]JoinKind{
	ast.CommaJoin: Inner, ast.CrossJoin: Inner, ast.InnerJoin: Inner,
	ast.LeftJoin: Left, ast.RightJoin: Right, ast.FullJoin: Full,
}

func (b *binder) join(j *ast.Join, where ast.Expr) (Node, ast.Expr, error) {
	kind := joinKinds[j.Kind]
	l, _, err := b.from(j.L, nil)
	if err != nil {
		return nil, nil, err
	}
	var r Node
	var asOf ast.Expr
	if tn, ok := j.R.(*ast.TableName); ok && tn.SystemTime != nil {
		asOf = tn.SystemTime
		plain := *tn
		plain.SystemTime = nil
		if r, err = b.table(&plain); err != nil {
			return nil, nil, err
		}
	} else if r, _, err = b.from(j.R, nil); err != nil {
		return nil, nil, err
	}
	sc := &scope{cols: append(append([]Column(nil), l.Columns()...), r.Columns()...)}
	bb := b.with(sc)
	var conds []expr.Expr
	// A conjunct may bind to an AND itself (BETWEEN does): its parts are
	// conditions of their own, keys or time bounds.
	for _, c := range conjuncts(j.On) {
		e, err := bb.scalar(c)
		if err != nil {
			return nil, nil, err
		}
		conds = append(conds, splitAnd(e)...)
	}
	for _, u := range j.Using {
		lc, err := nodeScope(l).resolve(&ast.Ref{Pos: u.Pos, Name: ast.Name{u}})
		if err != nil {
			return nil, nil, err
		}
		rc, err := nodeScope(r).resolve(&ast.Ref{Pos: u.Pos, Name: ast.Name{u}})
		if err != nil {
			return nil, nil, err
		}
		rc.Index += len(l.Columns())
		eq, err := expr.NewOp("=", lc, rc)
		if err != nil {
			return nil, nil, wrapAt(u.Pos, err)
		}
		conds = append(conds, eq)
	}
	rest := where
	if kind == Inner && where != nil {
		rest = nil
		for _, c := range conjuncts(where) {
			e, err := bb.scalar(c)
			if err != nil {
				return nil, nil, err
			}
			conds = append(conds, splitAnd(e)...)
		}
	}
	var asOfCol *expr.Col
	if asOf != nil {
		e, err := b.with(nodeScope(l)).scalar(asOf)
		if err != nil {
			return nil, nil, err
		}
		c, ok := e.(*expr.Col)
		if !ok || c.T.Time == types.NoTime {
			return nil, nil, errorAt(asOf.Position(), "FOR SYSTEM_TIME AS OF must name a time attribute of the left side (its rowtime or a PROCTIME() column)")
		}
		if kind != Inner && kind != Left {
			return nil, nil, errorAt(j.Pos, "a temporal join is INNER or LEFT")
		}
		asOfCol = c
	}
	n, err := planJoin(j.Pos, l, r, kind, conds, asOfCol)
	return n, rest, err
}

// windowTVF binds TUMBLE, HOP, CUMULATE or SESSION over a table.
func (b *binder) windowTVF(call *ast.Call) (Node, error) {
	kind := WindowKind(strings.ToUpper(joinName(call.Name)))
	var params []string
	switch kind {
	case Tumble:
		params = []string{"DATA", "TIMECOL", "SIZE", "OFFSET"}
	case Hop:
		params = []string{"DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"}
	case Cumulate:
		params = []string{"DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"}
	case Session:
		params = []string{"DATA", "TIMECOL", "GAP"}
	default:
		return nil, unsupportedAt(call.Pos, "table function "+string(kind)+" is not supported (weir has TUMBLE, HOP, CUMULATE and SESSION)")
	}
	args := map[string]ast.Expr{}
	for i, a := range call.Args {
		if na, ok := a.(*ast.NamedArg); ok {
			args[strings.ToUpper(na.Name.Name)] = na.Value
			continue
		}
		if i >= len(params) {
			return nil, errorAt(a.Position(), "%s takes at most %d arguments", kind, len(params))
		}
		args[params[i]] = a
	}
	data, ok := args["DATA"].(*ast.TableArg)
	if !ok {
		return nil, errorAt(call.Pos, "%s needs a table: %s(TABLE t, DESCRIPTOR(time_column), ...)", kind, kind)
	}
	in, err := b.named(data.Pos, joinName(data.Name), data.Name[len(data.Name)-1].Name)
	if err != nil {
		return nil, err
	}
	sc := nodeScope(in)
	desc, ok := args["TIMECOL"].(*ast.Descriptor)
	if !ok || len(desc.Columns) != 1 {
		return nil, errorAt(call.Pos, "%s needs DESCRIPTOR(time_column)", kind)
	}
	tc, err := sc.resolve(&ast.Ref{Pos: desc.Pos, Name: ast.Name{desc.Columns[0]}})
	if err != nil {
		return nil, err
	}
	if tc.T.Time == types.NoTime {
		return nil, errorAt(desc.Pos, "%s: column %s is not a time attribute (declare a WATERMARK for it, or use PROCTIME())", kind, tc.Name)
	}
	w := Window{Kind: kind, TimeCol: tc.Index, ProcTime: tc.T.Time == types.ProcTime}
	for _, p := range params[2:] {
		a, ok := args[p]
		if !ok {
			if p == "OFFSET" {
				continue
			}
			return nil, errorAt(call.Pos, "%s needs its %s argument", kind, p)
		}
		iv, ok := a.(*ast.Interval)
		if !ok {
			return nil, errorAt(a.Position(), "%s's %s must be an INTERVAL literal", kind, p)
		}
		ms, err := intervalMillis(iv)
		if err != nil {
			return nil, err
		}
		if ms <= 0 && p != "OFFSET" {
			return nil, errorAt(a.Position(), "%s's %s must be positive", kind, p)
		}
		switch p {
		case "SIZE":
			w.Size = ms
		case "SLIDE":
			w.Slide = ms
		case "STEP":
			w.Step = ms
		case "GAP":
			w.Gap = ms
		case "OFFSET":
			w.Offset = ms
		}
	}
	if kind == Cumulate && w.Size%w.Step != 0 {
		return nil, errorAt(call.Pos, "CUMULATE's size must be a multiple of its step")
	}
	for _, k := range data.PartitionBy {
		c, err := b.with(sc).scalar(k)
		if err != nil {
			return nil, err
		}
		col, ok := c.(*expr.Col)
		if !ok {
			return nil, errorAt(k.Position(), "PARTITION BY takes columns")
		}
		if kind != Session {
			return nil, errorAt(k.Position(), "PARTITION BY is for SESSION windows")
		}
		w.Keys = append(w.Keys, col.Index)
	}
	if in.Updating() {
		return nil, errorAt(call.Pos, "%s over an updating input is not supported: window table functions take append-only input", kind)
	}
	return &WindowTVF{In: in, Window: w}, nil
}
