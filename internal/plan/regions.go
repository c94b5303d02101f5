package plan

// Regions returns the plan's pipelined regions: the sets of vertices that
// edges connect, in either direction. Records never cross from one region
// to another, so a failure in one region cannot change what another
// computes, and a region can be restarted alone. Each region lists its
// vertex IDs in ascending order; regions are ordered by their first.
func (p *Plan) Regions() [][]int {
	parent := make([]int, len(p.Vertices))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(v int) int {
		for parent[v] != v {
			parent[v] = parent[parent[v]]
			v = parent[v]
		}
		return v
	}
	for _, v := range p.Vertices {
		for _, e := range v.Inputs {
			a, b := find(e.Source.ID), find(e.Target.ID)
			if a != b {
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	index := map[int]int{}
	var out [][]int
	for _, v := range p.Vertices {
		r := find(v.ID)
		i, ok := index[r]
		if !ok {
			i = len(out)
			index[r] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], v.ID)
	}
	return out
}

// Subtasks returns the number of subtasks of all vertices.
func (p *Plan) Subtasks() int {
	n := 0
	for _, v := range p.Vertices {
		n += v.Parallelism
	}
	return n
}
