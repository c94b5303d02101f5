package sql

import (
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/plan"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/sql/internal/exec"
)

// A regular join of two scans of one table that nothing else reads
// (Nexmark's q4 and q20 join the views auction and bid of the one
// generator table) reads the table's source through one operator, chained
// to it: the operator filters and projects each row for each side it
// belongs to and tags it with its side, and one keyed exchange takes the
// tagged rows to the join (exec.RegularJoinOfOne). Otherwise the
// source's rows would go to two operators over two exchanges (the
// planner chains only linear paths), each operator dropping the rows of
// the other side.

// joinOfScans builds regular join n with spec so when both its inputs
// are scans of one table, read by no other scan; ok is false otherwise,
// and nothing is built.
func (b *builder) joinOfScans(n *plan.Join, spec exec.JoinSpec) (s stream, ok bool, err error) {
	ls, lc, lok := scanOf(n.L)
	rs, rc, rok := scanOf(n.R)
	if !lok || !rok || ls.Table != rs.Table || ls.Table.Updating() {
		return stream{}, false, nil
	}
	if r := b.reads[ls.Table]; r == nil || r.scans != 2 || r.built || plan.Explain(n.L) == plan.Explain(n.R) {
		return stream{}, false, nil
	}
	src, r, err := b.scanSource(ls, lc)
	if err != nil {
		return stream{}, true, err
	}
	var sides [2]*projector
	var name string
	for i, sc := range [2]struct {
		s *plan.Scan
		c *plan.Calc
	}{{ls, lc}, {rs, rc}} {
		filter, proj := r.scanExprs(sc.s, sc.c)
		if nm := b.scanName(sc.s, sc.c, r, filter, proj); name == "" {
			name = nm
		}
		if sides[i], err = newProjector(name, filter, proj, false); err != nil {
			return stream{}, true, err
		}
	}
	if name == "" {
		name = b.name("calc")
	}
	spec.Name = b.name("join")
	return exec.RegularJoinOfOne(tagSides(src, name, sides), spec), true, nil
}

// scanOf returns the scan n reads, with the Calc over it (nil for none);
// ok is false when n is neither a scan nor a Calc of one.
func scanOf(n plan.Node) (s *plan.Scan, c *plan.Calc, ok bool) {
	switch n := n.(type) {
	case *plan.Scan:
		return n, nil, true
	case *plan.Calc:
		s, ok := n.In.(*plan.Scan)
		return s, n, ok
	}
	return nil, nil, false
}

// tagSides returns, for each row of in, its projection by each of sides
// whose filter keeps it, tagged with the side (a leading BOOLEAN, TRUE
// for sides[0]). The rows of in are the operator's alone: a row kept by
// one side only is written over.
func tagSides(in stream, name string, sides [2]*projector) stream {
	return weir.FlatMap(in, func(r row.Row, emit func(row.Row)) {
		keep := [2]bool{sides[0].keeps(r.V), sides[1].keeps(r.V)}
		for i, p := range sides {
			if !keep[i] {
				continue
			}
			tag := [1]row.Value{row.Bool(i == 0)}
			emit(row.Row{Op: r.Op, V: p.row(r.V, tag[:], !(keep[0] && keep[1]))})
		}
	}, weir.Name(name))
}
