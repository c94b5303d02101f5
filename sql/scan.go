package sql

import (
	"fmt"
	"slices"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/plan"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/sql/internal/exec"
	"github.com/weir-stream/weir/sql/internal/tables"
)

// A statement reads each table through one source, whatever the number
// of scans of it (Nexmark's views person, auction and bid all scan one
// generator table): the source reads the columns every scan needs, and
// each scan becomes a single operator that filters and projects the
// source's rows, evaluating the table's computed columns and the Calc
// over the scan (if any) at once. When every scan of a table pins a
// column to constants (event_type = 2), the source is narrowed to those
// values (tables.Where), so a connector that can skips the other
// records before it builds rows.

// tableRead is the one source of a table in a statement.
type tableRead struct {
	need  map[int]bool // the table's physical columns some scan needs
	scans int          // the scans announced
	pin   int          // the table column every scan pins, -1 for none
	in    []row.Value  // the values the scans pin it to
	// fixed is the pinned column's one value when the connector narrows
	// the source to it (tables.Narrows): every row has it, so the scans
	// read it as a literal, and the table's computed columns are
	// simplified with it (nexmark's dateTime, a CASE on event_type,
	// becomes bid.dateTime). Nil otherwise.
	fixed *expr.Lit
	read  []int // the source's columns, once built
	// room is the widest row a scan makes of the source's rows: made
	// with that room, a row can take its projection in place when the
	// scan is the source's only reader (project's reuse).
	room  int
	pos   []int // table column -> index in read, -1 if not read
	src   stream
	built bool
}

// planScans finds the scans under root and what each needs of its table.
func (b *builder) planScans(root plan.Node) {
	b.reads = map[*plan.Table]*tableRead{}
	type use struct {
		s *plan.Scan
		c *plan.Calc
	}
	var uses []use
	var walk func(n plan.Node)
	walk = func(n plan.Node) {
		switch n := n.(type) {
		case *plan.Scan:
			uses = append(uses, use{n, nil})
			b.addScan(n, nil)
			return
		case *plan.Calc:
			if s, ok := n.In.(*plan.Scan); ok {
				uses = append(uses, use{s, n})
				b.addScan(s, n)
				return
			}
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(root)
	for t, r := range b.reads {
		r.fix(t)
	}
	// What each scan needs is known once the pins are: a fixed column
	// is read as a literal.
	for _, u := range uses {
		t := u.s.Table
		r := b.reads[t]
		r.scanNeeds(u.s, u.c, func(col int) { r.need[col] = true })
		if u.c != nil {
			r.room = max(r.room, len(u.c.Proj))
		}
		if t.RowTime >= 0 {
			r.physical(t, t.RowTime, func(col int) { r.need[col] = true })
		}
		if r.pin >= 0 {
			r.need[r.pin] = true // the connector narrows on it
		}
	}
}

// addScan records the column scan s, read by Calc c (nil for none),
// pins.
func (b *builder) addScan(s *plan.Scan, c *plan.Calc) {
	t := s.Table
	r := b.reads[t]
	if r == nil {
		r = &tableRead{need: map[int]bool{}, pin: -2}
		b.reads[t] = r
	}
	r.scans++
	col, vals := -1, []row.Value(nil)
	if c != nil {
		col, vals = pinned(s, c.Filter)
	}
	switch {
	case col < 0 || r.pin == -1 || (r.pin >= 0 && r.pin != col):
		r.pin, r.in = -1, nil
	default:
		r.pin, r.in = col, append(r.in, vals...)
	}
}

// fix sets r.fixed when every scan pins the same column to one value
// and the connector narrows the source to it.
func (r *tableRead) fix(t *plan.Table) {
	if r.pin < 0 || !tables.Narrows(tableOf(t), r.pin) {
		return
	}
	v, typ := r.in[0], t.Columns[r.pin].T
	for _, w := range r.in[1:] {
		if w != v {
			return
		}
	}
	if v.K != typ.Kind {
		return
	}
	r.fixed = &expr.Lit{V: v, T: typ.Plain()}
}

// computed returns computed column col's expression over the table's
// columns, simplified with the fixed column if there is one.
func (r *tableRead) computed(t *plan.Table, col int) expr.Expr {
	e := t.Columns[col].Expr
	if r.fixed == nil {
		return e
	}
	return expr.Simplify(plan.Replace(e, func(c *expr.Col) expr.Expr {
		if c.Index == r.pin {
			return r.fixed
		}
		return c
	}))
}

// pinned finds a conjunct of filter "column = constant" on a physical
// column of s's table and returns that table column and the constant;
// -1 if there is none.
func pinned(s *plan.Scan, filter expr.Expr) (int, []row.Value) {
	if filter == nil {
		return -1, nil
	}
	op, ok := filter.(*expr.Op)
	if !ok {
		return -1, nil
	}
	if op.Op == "AND" {
		if col, v := pinned(s, op.Args[0]); col >= 0 {
			return col, v
		}
		return pinned(s, op.Args[1])
	}
	if op.Op != "=" {
		return -1, nil
	}
	c, ok := op.Args[0].(*expr.Col)
	l, lok := op.Args[1].(*expr.Lit)
	if !ok || !lok {
		c, ok = op.Args[1].(*expr.Col)
		l, lok = op.Args[0].(*expr.Lit)
	}
	if !ok || !lok || l.V.IsNull() || s.Table.Columns[s.Cols[c.Index]].Kind == plan.Computed {
		return -1, nil
	}
	return s.Cols[c.Index], []row.Value{l.V}
}

// source returns the table's source, built on the first call: its rows
// hold r.read, their timestamps are the watermarked column's.
func (b *builder) source(t *plan.Table, r *tableRead) (stream, error) {
	if r.built {
		return r.src, nil
	}
	r.pos = make([]int, len(t.Columns))
	for i := range r.pos {
		r.pos[i] = -1
	}
	for col := range r.need {
		r.read = append(r.read, col)
	}
	slices.Sort(r.read)
	for i, col := range r.read {
		r.pos[col] = i
	}
	w := tables.Where{Col: -1}
	if r.scans == 1 {
		w.Room = r.room // other readers' rows are not written over
	}
	if r.pin >= 0 {
		w.Col, w.In = r.pos[r.pin], r.in
	}
	src, err := tables.NewSourceWhere(tableOf(t), r.read, w)
	if err != nil {
		return stream{}, err
	}
	var opts []weir.SourceOption
	if t.RowTime >= 0 {
		ev, err := expr.Compile(r.column(t, t.RowTime))
		if err != nil {
			return stream{}, err
		}
		ts := func(x row.Row) int64 {
			v, err := ev(x.V)
			if err != nil || v.IsNull() {
				return weir.NoTimestamp
			}
			return v.I
		}
		opts = append(opts, weir.WithTimestamps(ts, time.Duration(t.Delay)*time.Millisecond))
	}
	r.src, r.built = weir.FromSource(b.p, b.name("source-"+t.Name), src.Source, opts...), true
	if t.Updating() {
		// An upsert table (upsert-kafka): its +U and -D rows by primary
		// key become a changelog that retracts what each replaces, before
		// any filter sees them (Flink's ChangelogNormalize).
		if len(t.PrimaryKey) == 0 {
			return stream{}, fmt.Errorf("table %s: an upsert table needs a PRIMARY KEY", t.Name)
		}
		var keys []int
		for _, k := range t.PrimaryKey {
			if r.pos[k] < 0 {
				return stream{}, fmt.Errorf("table %s: its primary key column %s is not read", t.Name, t.Columns[k].Name)
			}
			keys = append(keys, r.pos[k])
		}
		r.src = exec.Normalize(r.src, keys, b.script.ttl, b.name("normalize-"+t.Name))
	}
	return r.src, nil
}

// column returns table column col as an expression over the source's
// rows: the column read, or the computed column's expression.
func (r *tableRead) column(t *plan.Table, col int) expr.Expr {
	c := t.Columns[col]
	switch {
	case r.fixed != nil && col == r.pin:
		return r.fixed
	case c.Kind == plan.Computed:
		return plan.Remap(r.computed(t, col), r.pos)
	}
	return &expr.Col{Index: r.pos[col], Name: c.Name, T: c.T}
}

// scan reads s, filtered and projected by Calc c if it is not nil, as
// one operator over the table's source.
func (b *builder) scan(s *plan.Scan, c *plan.Calc) (stream, error) {
	src, r, err := b.scanSource(s, c)
	if err != nil {
		return stream{}, err
	}
	filter, proj := r.scanExprs(s, c)
	name := b.scanName(s, c, r, filter, proj)
	if name == "" {
		return src, nil
	}
	// The source's rows are this scan's alone if it is the only one (and
	// no normalization keeps them in state).
	return project(src, name, filter, proj, r.scans == 1 && !s.Table.Updating())
}

// scanSource returns the source of scan s (read by Calc c, nil for
// none), built on first use, and its table's read.
func (b *builder) scanSource(s *plan.Scan, c *plan.Calc) (stream, *tableRead, error) {
	t := s.Table
	r := b.reads[t]
	if r == nil || (r.built && !covers(r, s, c)) {
		return stream{}, nil, fmt.Errorf("table %s: a scan the plan did not announce", t.Name)
	}
	src, err := b.source(t, r)
	return src, r, err
}

// scanExprs returns the filter (nil for none) and the projection over
// the source's rows that make the rows of scan s read by Calc c.
func (r *tableRead) scanExprs(s *plan.Scan, c *plan.Calc) (filter expr.Expr, proj []expr.Expr) {
	out := func(x *expr.Col) expr.Expr { return r.column(s.Table, s.Cols[x.Index]) }
	if c == nil {
		for i := range s.Cols {
			proj = append(proj, out(&expr.Col{Index: i}))
		}
		return nil, proj
	}
	if c.Filter != nil {
		filter = expr.Simplify(plan.Replace(c.Filter, out))
		if l, ok := filter.(*expr.Lit); ok && !l.V.IsNull() && l.V.Bool() {
			filter = nil // the source narrowed the rows to it
		}
	}
	for _, e := range c.Proj {
		proj = append(proj, plan.Replace(e, out))
	}
	return filter, proj
}

// scanName names the operator of scan s read by Calc c; "" when the scan
// needs none: its rows are the source's as they are.
func (b *builder) scanName(s *plan.Scan, c *plan.Calc, r *tableRead, filter expr.Expr, proj []expr.Expr) string {
	if filter == nil && expr.PassesThrough(proj, len(r.read)) {
		return ""
	}
	name := b.name("scan-" + s.Table.Name)
	if c != nil {
		name = b.name("calc")
	}
	return name
}

// covers reports whether the built source reads every column scan s
// read by c needs.
func covers(r *tableRead, s *plan.Scan, c *plan.Calc) bool {
	ok := true
	r.scanNeeds(s, c, func(col int) { ok = ok && r.pos[col] >= 0 })
	return ok
}

// scanNeeds calls f with every physical or metadata column of s's table
// that scan s, read by Calc c (nil for none), needs: those its output
// (or c's filter and projection) reads, through the computed columns.
func (r *tableRead) scanNeeds(s *plan.Scan, c *plan.Calc, f func(col int)) {
	use := func(i int) { r.physical(s.Table, s.Cols[i], f) }
	if c == nil {
		for i := range s.Cols {
			use(i)
		}
		return
	}
	plan.Columns(c.Filter, use)
	for _, e := range c.Proj {
		plan.Columns(e, use)
	}
}

// physical calls f with table column col if it is read from the source,
// or with the columns a computed one reads; not for the fixed column.
func (r *tableRead) physical(t *plan.Table, col int, f func(int)) {
	switch {
	case r.fixed != nil && col == r.pin:
	case t.Columns[col].Kind == plan.Computed:
		plan.Columns(r.computed(t, col), func(c int) { r.physical(t, c, f) })
	default:
		f(col)
	}
}

// project returns the rows of in for which filter (if not nil) is TRUE,
// as the values of proj; it copies columns without calling an Eval. With
// reuse, the rows of in are the operator's alone (no other operator reads
// them, nothing keeps them), so it writes its output over them where
// they are wide enough.
func project(in stream, name string, filter expr.Expr, proj []expr.Expr, reuse bool) (stream, error) {
	if _, err := newProjector(name, filter, proj, false); err != nil {
		return stream{}, err
	}
	// Each subtask compiles the projection for itself (CompileOwned), so
	// that its expressions may keep what they computed for the row before
	// (DATE_FORMAT's last day).
	return weir.FlatMapPerSubtask(in, func() func(row.Row, func(row.Row)) {
		p, err := newProjector(name, filter, proj, true)
		if err != nil {
			panic(fmt.Errorf("%s: compiled once, failed the second time: %w", name, err))
		}
		return func(r row.Row, emit func(row.Row)) {
			if !p.keeps(r.V) {
				return
			}
			emit(row.Row{Op: r.Op, V: p.row(r.V, nil, reuse)})
		}
	}, weir.Name(name)), nil
}

// projector is a compiled filter and projection of an operator's rows.
type projector struct {
	name     string // the operator's, for errors
	filter   expr.Expr
	keep     func([]row.Value) (bool, error) // nil: every row
	proj     []expr.Expr
	copyFrom []int // the column proj[i] copies, -1 if computed
	evals    []expr.Eval
}

// newProjector compiles a filter and projection; with own, for one
// goroutine's use (expr.CompileOwned).
func newProjector(name string, filter expr.Expr, proj []expr.Expr, own bool) (*projector, error) {
	compile := expr.Compile
	if own {
		compile = expr.CompileOwned
	}
	p := &projector{name: name, filter: filter, proj: proj, evals: make([]expr.Eval, len(proj)), copyFrom: make([]int, len(proj))}
	var err error
	if filter != nil {
		if p.keep, err = expr.CompilePredicate(filter); err != nil {
			return nil, err
		}
	}
	for i, e := range proj {
		p.copyFrom[i] = -1
		if c, ok := e.(*expr.Col); ok {
			p.copyFrom[i] = c.Index
			continue
		}
		if _, ok := e.(*expr.ProcTime); ok {
			p.evals[i] = procTime
			continue
		}
		if p.evals[i], err = compile(e); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// row returns the projection of in, after the columns of lead (a side's
// tag, or none). With reuse, in is the caller's to overwrite: the row is
// computed on the stack from in, then written over it, where in is wide
// enough.
func (p *projector) row(in, lead []row.Value, reuse bool) []row.Value {
	w := len(lead) + len(p.proj)
	if reuse && w <= 16 && w <= cap(in) {
		var scratch [16]row.Value
		copy(scratch[:], lead)
		p.fill(scratch[len(lead):w], in)
		out := in[:w]
		copy(out, scratch[:w])
		return out
	}
	out := make([]row.Value, w)
	copy(out, lead)
	p.fill(out[len(lead):], in)
	return out
}

// keeps reports whether the filter is TRUE for in; an error panics,
// naming the operator and the filter.
func (p *projector) keeps(in []row.Value) bool {
	if p.keep == nil {
		return true
	}
	ok, err := p.keep(in)
	if err != nil {
		panic(fmt.Errorf("%s: WHERE %s: %w", p.name, p.filter, err))
	}
	return ok
}

// fill sets out[i] to column copyFrom[i] of in, or where that is -1 to
// evals[i] of in; an error panics, naming the operator and proj[i].
func (p *projector) fill(out, in []row.Value) {
	for i, from := range p.copyFrom {
		if from >= 0 {
			out[i] = in[from]
			continue
		}
		v, err := p.evals[i](in)
		if err != nil {
			panic(fmt.Errorf("%s: %s: %w", p.name, p.proj[i], err))
		}
		out[i] = v
	}
}

// procTime is PROCTIME()'s value: the wall clock when the row is
// projected.
func procTime([]row.Value) (row.Value, error) { return row.Timestamp(time.Now().UnixMilli()), nil }
