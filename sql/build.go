package sql

import (
	"fmt"

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
		b := &builder{p: p, script: s, prefix: fmt.Sprintf("sql%d", i+1), built: map[string]stream{}}
		b.planScans(st.Sink)
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
	// reads are the statement's sources, one per table (scan.go).
	reads map[*plan.Table]*tableRead
	// built holds the streams of the subplans built, by their plan's
	// text: a subplan that occurs twice (q5's window aggregation of bids)
	// runs once and feeds both of its consumers.
	built map[string]stream
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

// node returns the stream of subplan n, built once.
func (b *builder) node(n plan.Node) (stream, error) {
	key := plan.Explain(n)
	if s, ok := b.built[key]; ok && plan.Deterministic(n) {
		return s, nil
	}
	s, err := b.build(n)
	if err == nil {
		b.built[key] = s
	}
	return s, err
}

func (b *builder) build(n plan.Node) (stream, error) {
	switch n := n.(type) {
	case *plan.Scan:
		return b.scan(n, nil)
	case *plan.Calc:
		if s, ok := n.In.(*plan.Scan); ok {
			return b.scan(s, n)
		}
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

// calc filters and projects.
func (b *builder) calc(n *plan.Calc) (stream, error) {
	in, err := b.node(n.In)
	if err != nil {
		return stream{}, err
	}
	if n.Filter == nil && expr.PassesThrough(n.Proj, len(n.In.Columns())) {
		return in, nil
	}
	return project(in, b.name("calc"), n.Filter, n.Proj, false)
}
