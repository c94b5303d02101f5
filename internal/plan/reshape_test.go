package plan

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestWithParallelismChangesOneTaskAndKeepsEveryID(t *testing.T) {
	g := &Graph{Parallelism: 2}
	src := node(g, "source", Source, 0)
	w := node(g, "window", Operator, 0)
	w.Keyed = true
	g.Connect(src, 0, w, 0, Hash, nil)
	s := node(g, "sink", Sink, 0)
	g.Connect(w, 0, s, 0, Forward, nil)
	other := node(g, "other", Sink, 0)
	g.Connect(src, 0, other, 0, Rebalance, nil)
	p, err := Build(g)
	if err != nil {
		t.Fatal(err)
	}
	win := p.VertexOf[w.ID].ID
	q, err := p.WithParallelism(map[int]int{win: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Vertices[win].Parallelism; got != 5 {
		t.Fatalf("parallelism %d, want 5", got)
	}
	if got := p.Vertices[win].Parallelism; got != 2 {
		t.Fatalf("the old plan changed: parallelism %d, want 2", got)
	}
	for _, v := range q.Vertices {
		for _, e := range v.Inputs {
			if e.Target != v || q.Vertices[e.Source.ID] != e.Source {
				t.Fatalf("edge %s -> %s points into the old plan", e.From.Name, e.To.Name)
			}
		}
	}
	in := q.Vertices[win].Inputs[0]
	if in.Channels() != 2 || len(q.Vertices[in.Source.ID].Outputs) != 2 {
		t.Fatalf("input of the window: %d channels, want 2", in.Channels())
	}
	if got := slices.Sorted(maps.Keys(q.Downstream(win))); !slices.Equal(got, []int{win}) {
		t.Fatalf("downstream of the window %v, want only itself (the sink is chained)", got)
	}
	if got := len(q.Downstream(q.VertexOf[src.ID].ID)); got != len(q.Vertices) {
		t.Fatalf("downstream of the source has %d tasks, want all %d", got, len(q.Vertices))
	}
}

func TestWithParallelismRefusesAForwardEdgeAndAParallelismOutOfRange(t *testing.T) {
	g := &Graph{Parallelism: 2, DisableChaining: true}
	src := node(g, "source", Source, 0)
	m := node(g, "map", Operator, 0)
	g.Connect(src, 0, m, 0, Forward, nil)
	p, err := Build(g)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.WithParallelism(map[int]int{p.VertexOf[m.ID].ID: 3}); err == nil || !strings.Contains(err.Error(), "forward edge") {
		t.Fatalf("got %v, want the forward edge refused", err)
	}
	if _, err := p.WithParallelism(map[int]int{p.VertexOf[m.ID].ID: 129}); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("got %v, want the parallelism refused", err)
	}
}
