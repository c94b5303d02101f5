package plan

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -rewrite.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("plan differs from %s (run with -rewrite after checking):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

func node(g *Graph, name string, kind Kind, par int) *Node {
	ports := 1
	if kind == Sink {
		ports = 0
	}
	return g.AddNode(&Node{Name: name, Kind: kind, Parallelism: par, Ports: ports})
}

func TestChainingAndPartitioning(t *testing.T) {
	g := &Graph{Parallelism: 2}
	src := node(g, "source", Source, 0)
	m := node(g, "map", Operator, 0)
	g.Connect(src, 0, m, 0, Forward, nil)
	f := node(g, "filter", Operator, 0)
	g.Connect(m, 0, f, 0, Forward, nil)
	w := node(g, "window", Operator, 0)
	w.Keyed = true
	g.Connect(f, 0, w, 0, Hash, nil)
	fmt1 := node(g, "format", Operator, 0)
	g.Connect(w, 0, fmt1, 0, Forward, nil)
	s := node(g, "sink", Sink, 1)
	g.Connect(fmt1, 0, s, 0, Forward, nil) // different parallelism: rebalance
	src2 := node(g, "other", Source, 3)
	u := node(g, "union-consumer", Operator, 0)
	g.Connect(src2, 0, u, 0, Forward, nil)
	g.Connect(fmt1, 0, u, 0, Broadcast, nil)
	s2 := node(g, "sink2", Sink, 0)
	g.Connect(u, 0, s2, 0, Forward, nil)
	p, err := Build(g)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "chaining.txt", p.String())
}

func TestDisableChaining(t *testing.T) {
	g := &Graph{Parallelism: 1, DisableChaining: true}
	src := node(g, "source", Source, 0)
	m := node(g, "map", Operator, 0)
	g.Connect(src, 0, m, 0, Forward, nil)
	p, err := Build(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Vertices) != 2 {
		t.Fatalf("got %d tasks, want 2", len(p.Vertices))
	}
}

func TestBuildErrors(t *testing.T) {
	cases := []struct {
		name  string
		build func(g *Graph)
		want  string
	}{
		{"empty", func(g *Graph) {}, "no operators"},
		{"parallelism", func(g *Graph) { node(g, "s", Source, 200) }, `operator "s": parallelism 200 out of range 1..128`},
		{"no input", func(g *Graph) { node(g, "m", Operator, 0) }, `operator "m" has no input`},
		{"keyed without hash", func(g *Graph) {
			s := node(g, "s", Source, 0)
			k := node(g, "k", Operator, 0)
			k.Keyed = true
			g.Connect(s, 0, k, 0, Forward, nil)
		}, `keyed operator "k" needs a keyed input`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := &Graph{}
			c.build(g)
			_, err := Build(g)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}
