package sql

import (
	"fmt"
	"slices"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/plan"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/sql/internal/exec"
	"github.com/weir-stream/weir/sql/internal/tables"
)

// Build adds every INSERT and query of the script to p. Operators are
// named after their statement and place in the plan ("sql1-join-3"),
// which is also their identity in checkpoints and savepoints: the same
// script restores its state; an edited one restores what still has the
// same shape up to that operator.
func (s *Script) Build(p *weir.Pipeline) error {
	if s.prog.Explain {
		return fmt.Errorf("the script holds EXPLAIN statements: it is explained, not run")
	}
	for i, st := range s.prog.Statements {
		b := &builder{p: p, script: s, prefix: fmt.Sprintf("sql%d", i+1)}
		if err := b.sink(st.Sink); err != nil {
			return fmt.Errorf("statement %d: %w", i+1, err)
		}
	}
	return nil
}

// builder turns one statement's plan into operators.
type builder struct {
	p      *weir.Pipeline
	script *Script
	prefix string
	n      int
}

// name returns the next operator name of kind.
func (b *builder) name(kind string) string {
	b.n++
	return fmt.Sprintf("%s-%s-%d", b.prefix, kind, b.n)
}

type stream = weir.Stream[row.Row]

func (b *builder) sink(n *plan.Sink) error {
	in, err := b.node(n.In)
	if err != nil {
		return err
	}
	name := b.name("sink")
	if n.Table == nil {
		t := tables.Table{Name: "query", Options: map[string]string{"connector": "print"}}
		if dir := b.script.opts.QueryOutput; dir != "" {
			t.Options = map[string]string{"connector": "filesystem", "path": dir, "format": "json"}
		}
		for _, c := range n.Columns() {
			t.Columns = append(t.Columns, tables.Column{Path: []string{c.Name}, Type: c.T})
		}
		sink, err := tables.NewSinkTo(t, n.Updating(), b.script.opts.stdout())
		if err != nil {
			return err
		}
		weir.To(in, name, sink)
		return nil
	}
	sink, err := tables.NewSinkTo(tableOf(n.Table), n.Updating(), b.script.opts.stdout())
	if err != nil {
		return err
	}
	weir.To(in, name, sink)
	return nil
}

// tableOf converts a catalog table for the connectors.
func tableOf(t *plan.Table) tables.Table {
	out := tables.Table{Name: t.Name, Options: t.Options, PrimaryKey: t.PrimaryKey}
	for _, c := range t.Columns {
		path := c.Path
		if path == nil {
			path = []string{c.Name}
		}
		col := tables.Column{Path: path, Type: c.T.Plain(), Virtual: c.Kind == plan.Computed || c.Virtual}
		if c.Kind == plan.Metadata {
			col.Metadata = c.MetadataKey
		}
		out.Columns = append(out.Columns, col)
	}
	return out
}

func (b *builder) node(n plan.Node) (stream, error) {
	switch n := n.(type) {
	case *plan.Scan:
		return b.scan(n)
	case *plan.Calc:
		return b.calc(n)
	case *plan.WindowTVF:
		in, err := b.node(n.In)
		if err != nil {
			return stream{}, err
		}
		return exec.WindowTVF(in, windowSpec(n.Window, b.name("window-tvf")))
	case *plan.Aggregate:
		return b.aggregate(n)
	case *plan.Join:
		return b.join(n)
	case *plan.Rank:
		return b.rank(n)
	case *plan.Union:
		var ins []stream
		for _, in := range n.Ins {
			s, err := b.node(in)
			if err != nil {
				return stream{}, err
			}
			ins = append(ins, s)
		}
		return weir.Union(ins[0], ins[1:]...), nil
	case *plan.Values:
		var rows []row.Row
		for _, r := range n.Rows {
			vals := make([]row.Value, len(r))
			for i, e := range r {
				v, ok := expr.Fold(e)
				if !ok {
					return stream{}, fmt.Errorf("VALUES must hold constants, not %s", e)
				}
				vals[i] = v
			}
			rows = append(rows, row.Row{V: vals})
		}
		return weir.FromSource(b.p, b.name("values"), collection.Of(rows...)), nil
	}
	return stream{}, fmt.Errorf("plan node %T cannot run", n)
}

// scan reads a table: the physical and metadata columns the plan needs
// (and those its computed columns and watermark read) from the source,
// the event time from the watermarked column, then the computed columns.
func (b *builder) scan(n *plan.Scan) (stream, error) {
	t := n.Table
	pos := map[int]int{} // table column -> position in the source's rows
	var read []int
	need := func(c int) {
		if _, ok := pos[c]; !ok && t.Columns[c].Kind != plan.Computed {
			pos[c] = len(read)
			read = append(read, c)
		}
	}
	var deps func(c int)
	deps = func(c int) {
		if t.Columns[c].Kind == plan.Computed {
			plan.Columns(t.Columns[c].Expr, deps)
			return
		}
		need(c)
	}
	for _, c := range n.Cols {
		deps(c)
	}
	if t.RowTime >= 0 {
		deps(t.RowTime)
	}
	src, err := tables.NewSource(tableOf(t), read)
	if err != nil {
		return stream{}, err
	}
	m := make([]int, len(t.Columns))
	for i := range m {
		m[i] = -1
		if p, ok := pos[i]; ok {
			m[i] = p
		}
	}
	compute := func(c int) (expr.Eval, error) {
		return expr.Compile(plan.Remap(t.Columns[c].Expr, m))
	}
	var opts []weir.SourceOption[row.Row]
	if t.RowTime >= 0 {
		var ts func(row.Row) int64
		if t.Columns[t.RowTime].Kind == plan.Computed {
			ev, err := compute(t.RowTime)
			if err != nil {
				return stream{}, err
			}
			ts = func(r row.Row) int64 {
				v, err := ev(r.V)
				if err != nil || v.IsNull() {
					return weir.NoTimestamp
				}
				return v.I
			}
		} else {
			p := pos[t.RowTime]
			ts = func(r row.Row) int64 {
				if r.V[p].IsNull() {
					return weir.NoTimestamp
				}
				return r.V[p].I
			}
		}
		opts = append(opts, weir.WithTimestamps(ts, time.Duration(t.Delay)*time.Millisecond))
	}
	s := weir.FromSource(b.p, b.name("source-"+t.Name), src.Source, opts...)
	// The output columns, computed where they are computed.
	same := len(n.Cols) == len(read)
	evals := make([]expr.Eval, len(n.Cols))
	for i, c := range n.Cols {
		if t.Columns[c].Kind == plan.Computed {
			ev, err := compute(c)
			if err != nil {
				return stream{}, err
			}
			evals[i], same = ev, false
			continue
		}
		if pos[c] != i {
			same = false
		}
		p := pos[c]
		evals[i] = func(vals []row.Value) (row.Value, error) { return vals[p], nil }
	}
	if !same {
		s = weir.FlatMap(s, func(r row.Row, emit func(row.Row)) {
			out := make([]row.Value, len(evals))
			for i, ev := range evals {
				v, err := ev(r.V)
				if err != nil {
					panic(fmt.Errorf("table %s: %w", t.Name, err))
				}
				out[i] = v
			}
			emit(row.Row{Op: r.Op, V: out})
		}, weir.Name(b.name("computed-columns")))
	}
	if !t.Updating() {
		return s, nil
	}
	// An upsert table (upsert-kafka): its +U and -D rows by primary key
	// become a changelog that retracts what it replaces.
	if len(t.PrimaryKey) == 0 {
		return stream{}, fmt.Errorf("table %s: an upsert table needs a PRIMARY KEY", t.Name)
	}
	var keys []int
	for _, k := range t.PrimaryKey {
		keys = append(keys, slices.Index(n.Cols, k))
	}
	return exec.Normalize(s, keys, b.script.ttl, b.name("normalize-"+t.Name)), nil
}

// calc filters and projects.
func (b *builder) calc(n *plan.Calc) (stream, error) {
	in, err := b.node(n.In)
	if err != nil {
		return stream{}, err
	}
	if n.Filter == nil && identity(n) {
		return in, nil
	}
	var keep func([]row.Value) (bool, error)
	if n.Filter != nil {
		if keep, err = expr.CompilePredicate(n.Filter); err != nil {
			return stream{}, err
		}
	}
	evals := make([]expr.Eval, len(n.Proj))
	for i, e := range n.Proj {
		if _, ok := e.(*expr.ProcTime); ok {
			evals[i] = procTime
			continue
		}
		if evals[i], err = expr.Compile(e); err != nil {
			return stream{}, err
		}
	}
	name := b.name("calc")
	return weir.FlatMap(in, func(r row.Row, emit func(row.Row)) {
		if keep != nil {
			ok, err := keep(r.V)
			if err != nil {
				panic(fmt.Errorf("%s: WHERE %s: %w", name, n.Filter, err))
			}
			if !ok {
				return
			}
		}
		out := make([]row.Value, len(evals))
		for i, ev := range evals {
			v, err := ev(r.V)
			if err != nil {
				panic(fmt.Errorf("%s: %s: %w", name, n.Proj[i], err))
			}
			out[i] = v
		}
		emit(row.Row{Op: r.Op, V: out})
	}, weir.Name(name)), nil
}

// procTime is PROCTIME()'s value: the wall clock when the row is
// projected.
func procTime([]row.Value) (row.Value, error) { return row.Timestamp(time.Now().UnixMilli()), nil }

// identity reports whether a projection passes every column on as it is.
func identity(n *plan.Calc) bool {
	if len(n.Proj) != len(n.In.Columns()) {
		return false
	}
	for i, e := range n.Proj {
		if c, ok := e.(*expr.Col); !ok || c.Index != i {
			return false
		}
	}
	return true
}
