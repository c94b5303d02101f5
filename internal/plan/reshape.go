package plan

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// This file derives the plan of a running job whose tasks change
// parallelism (a live rescale): the same vertices, chains, edges and IDs,
// some vertices at another parallelism, and the vertices a change
// reaches downstream.

// ForwardEdge returns an input or output edge of v with forward
// partitioning, or nil: v cannot change parallelism alone while it has
// one.
func (v *Vertex) ForwardEdge() *PhysicalEdge {
	for _, e := range append(append([]*PhysicalEdge(nil), v.Inputs...), v.Outputs...) {
		if e.Partitioning == Forward {
			return e
		}
	}
	return nil
}

// WithParallelism returns a copy of p in which each vertex named in
// changes (vertex ID to parallelism) runs at the given parallelism. The
// nodes, their chaining, the vertex and edge order and every ID stay as
// in p, so a checkpoint of either plan names the same operators in the
// same tasks. It fails for an unknown vertex, a parallelism out of
// range, and a changed vertex with a forward edge (its two ends must
// keep one parallelism).
func (p *Plan) WithParallelism(changes map[int]int) (*Plan, error) {
	for id, n := range changes {
		if id < 0 || id >= len(p.Vertices) {
			return nil, fmt.Errorf("plan: no task %d", id)
		}
		v := p.Vertices[id]
		if n < 1 || n > p.MaxParallelism {
			return nil, fmt.Errorf("plan: parallelism %d of %q is out of range [1, %d] (the job's max parallelism)", n, v.Name(), p.MaxParallelism)
		}
		if e := v.ForwardEdge(); e != nil && n != v.Parallelism {
			return nil, fmt.Errorf("plan: %q has a forward edge %q -> %q, whose ends must keep one parallelism", v.Name(), e.From.Name, e.To.Name)
		}
	}
	q := &Plan{MaxParallelism: p.MaxParallelism, UIDs: p.UIDs, VertexOf: make([]*Vertex, len(p.VertexOf))}
	for _, v := range p.Vertices {
		c := &Vertex{ID: v.ID, Chain: v.Chain, Parallelism: v.Parallelism}
		if n, ok := changes[v.ID]; ok {
			c.Parallelism = n
		}
		q.Vertices = append(q.Vertices, c)
		for _, n := range v.Chain {
			q.VertexOf[n.ID] = c
		}
	}
	edges := map[*PhysicalEdge]*PhysicalEdge{}
	clone := func(e *PhysicalEdge) *PhysicalEdge {
		if c, ok := edges[e]; ok {
			return c
		}
		c := &PhysicalEdge{Edge: e.Edge, Source: q.Vertices[e.Source.ID], Target: q.Vertices[e.Target.ID], Partitioning: e.Partitioning}
		edges[e] = c
		return c
	}
	for _, v := range p.Vertices {
		c := q.Vertices[v.ID]
		for _, e := range v.Inputs {
			c.Inputs = append(c.Inputs, clone(e))
		}
		for _, e := range v.Outputs {
			c.Outputs = append(c.Outputs, clone(e))
		}
	}
	return q, nil
}

// Downstream returns the IDs of the vertices reachable from the given
// ones along edges, the given ones included.
func (p *Plan) Downstream(ids ...int) map[int]bool {
	seen := map[int]bool{}
	var visit func(id int)
	visit = func(id int) {
		if seen[id] {
			return
		}
		seen[id] = true
		for _, e := range p.Vertices[id].Outputs {
			visit(e.Target.ID)
		}
	}
	for _, id := range ids {
		visit(id)
	}
	return seen
}

// ParseTaskParallelism parses the job flag --task-parallelism: ID=N pairs
// separated by commas, a task's ID and its parallelism.
func ParseTaskParallelism(s string) (map[int]int, error) {
	out := map[int]int{}
	for _, pair := range strings.Split(s, ",") {
		id, n, ok := strings.Cut(strings.TrimSpace(pair), "=")
		v, err1 := strconv.Atoi(id)
		p, err2 := strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil || v < 0 || p < 1 {
			return nil, fmt.Errorf("%q is no task ID=parallelism pair", pair)
		}
		out[v] = p
	}
	return out, nil
}

// FormatTaskParallelism is the --task-parallelism value of tasks, in
// task order.
func FormatTaskParallelism(tasks map[int]int) string {
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(tasks)) {
		parts = append(parts, fmt.Sprintf("%d=%d", id, tasks[id]))
	}
	return strings.Join(parts, ",")
}

// TaskOf returns the ID of the task (vertex) that runs the operator with
// uid or name, or an error listing the operators' names.
func (p *Plan) TaskOf(name string) (int, error) {
	var names []string
	for _, v := range p.Vertices {
		for _, n := range v.Chain {
			if p.UID(n) == name || n.Name == name {
				return v.ID, nil
			}
			names = append(names, n.Name)
		}
	}
	slices.Sort(names)
	return 0, fmt.Errorf("the job has no operator named %q (it has %s)", name, strings.Join(names, ", "))
}
