package plan

import (
	"fmt"
	"testing"
)

func TestRegionsAreConnectedComponents(t *testing.T) {
	g := &Graph{Parallelism: 2, DisableChaining: true}
	// Pipeline A: a -> ka (keyed) -> sa. Pipeline B: b1, b2 -> union -> sb.
	a := node(g, "a", Source, 0)
	ka := node(g, "ka", Operator, 0)
	ka.Keyed = true
	g.Connect(a, 0, ka, 0, Hash, nil)
	sa := node(g, "sa", Sink, 0)
	g.Connect(ka, 0, sa, 0, Forward, nil)
	b1 := node(g, "b1", Source, 0)
	b2 := node(g, "b2", Source, 0)
	u := node(g, "u", Operator, 0)
	g.Connect(b1, 0, u, 0, Forward, nil)
	g.Connect(b2, 0, u, 0, Rebalance, nil)
	sb := node(g, "sb", Sink, 0)
	g.Connect(u, 0, sb, 0, Forward, nil)
	p, err := Build(g)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, r := range p.Regions() {
		var names []string
		for _, v := range r {
			names = append(names, p.Vertices[v].Name())
		}
		got = append(got, names)
	}
	if want := "[[a ka sa] [b1 b2 u sb]]"; fmt.Sprint(got) != want {
		t.Fatalf("regions %v, want %s", got, want)
	}
}
