// Package plan turns a logical dataflow graph into a physical plan: it sets
// each operator's parallelism, fuses operators into chains (tasks) and
// decides how records are partitioned between tasks.
//
// The package is pure: it imports no I/O and starts no goroutines. The
// operators' implementations travel through it as opaque values.
package plan

import (
	"fmt"
	"strings"
)

// Kind is what a logical node does.
type Kind int

const (
	// Source reads external input; it has no inputs.
	Source Kind = iota
	// Operator transforms its inputs into outputs.
	Operator
	// Sink writes its input out; it has no outputs.
	Sink
)

func (k Kind) String() string {
	switch k {
	case Source:
		return "source"
	case Sink:
		return "sink"
	}
	return "operator"
}

// Partitioning says how an edge distributes records over the consumer's
// subtasks.
type Partitioning int

const (
	// Forward sends subtask i's records to subtask i. It needs equal
	// parallelism on both sides; otherwise the planner uses Rebalance.
	Forward Partitioning = iota
	// Hash sends each record to the subtask owning its key group.
	Hash
	// Rebalance spreads records round-robin over all subtasks.
	Rebalance
	// Broadcast sends every record to every subtask.
	Broadcast
)

func (p Partitioning) String() string {
	return [...]string{"FORWARD", "HASH", "REBALANCE", "BROADCAST"}[p]
}

// Node is one logical operator.
type Node struct {
	ID   int
	Name string
	Kind Kind
	// Parallelism is the number of subtasks; 0 means the graph's default.
	Parallelism int
	// Inputs are the edges feeding the node, in order.
	Inputs []*Edge
	// Ports is the number of output ports (0 for sinks; 1 plus the side
	// outputs otherwise).
	Ports int
	// Keyed marks operators that hold keyed state; they need Hash inputs.
	Keyed bool
	// Impl is the operator's implementation, opaque to the planner.
	Impl any
	// UID is the operator's identity across versions of the job (uid.go);
	// "" for the one derived from its name.
	UID string
}

// Edge connects output port Port of From to logical input Input of To.
type Edge struct {
	From         *Node
	Port         int
	To           *Node
	Input        int
	Partitioning Partitioning
	// Impl is the edge's typed implementation (codec, key selector),
	// opaque to the planner.
	Impl any
}

// Graph is a logical dataflow graph.
type Graph struct {
	Nodes []*Node
	// Parallelism is the default parallelism.
	Parallelism int
	// MaxParallelism is the number of key groups (default 128).
	MaxParallelism int
	// DisableChaining puts every operator in a task of its own.
	DisableChaining bool
}

// AddNode appends a node and returns it with its ID set.
func (g *Graph) AddNode(n *Node) *Node {
	n.ID = len(g.Nodes)
	g.Nodes = append(g.Nodes, n)
	return n
}

// Connect adds an edge from port of from to the next input of to.
func (g *Graph) Connect(from *Node, port int, to *Node, input int, p Partitioning, impl any) *Edge {
	e := &Edge{From: from, Port: port, To: to, Input: input, Partitioning: p, Impl: impl}
	to.Inputs = append(to.Inputs, e)
	return e
}

// Vertex is one task type of the physical plan: a chain of nodes run by the
// same goroutine, Parallelism times.
type Vertex struct {
	ID          int
	Chain       []*Node
	Parallelism int
	// Inputs are the edges entering the head of the chain.
	Inputs []*PhysicalEdge
	// Outputs are the edges leaving the chain (from its last node).
	Outputs []*PhysicalEdge
}

// Head returns the first node of the chain.
func (v *Vertex) Head() *Node { return v.Chain[0] }

// Tail returns the last node of the chain.
func (v *Vertex) Tail() *Node { return v.Chain[len(v.Chain)-1] }

// Name joins the chain's node names.
func (v *Vertex) Name() string {
	names := make([]string, len(v.Chain))
	for i, n := range v.Chain {
		names[i] = n.Name
	}
	return strings.Join(names, " -> ")
}

// PhysicalEdge is a network edge between two vertices.
type PhysicalEdge struct {
	*Edge
	Source, Target *Vertex
	// Partitioning may differ from Edge.Partitioning (Forward becomes
	// Rebalance between different parallelisms).
	Partitioning Partitioning
}

// Plan is the physical plan of a graph.
type Plan struct {
	Vertices       []*Vertex
	MaxParallelism int
	// VertexOf maps a node ID to its vertex.
	VertexOf []*Vertex
	// UIDs holds each node's uid, by node ID (uid.go).
	UIDs []string
}

// Build plans g. It fails on a graph with no nodes, a cycle, a parallelism
// out of range or a keyed operator fed by a non-hash edge.
func Build(g *Graph) (*Plan, error) {
	if len(g.Nodes) == 0 {
		return nil, fmt.Errorf("plan: the pipeline has no operators")
	}
	maxPar := g.MaxParallelism
	if maxPar == 0 {
		maxPar = 128
	}
	def := g.Parallelism
	if def == 0 {
		def = 1
	}
	par := make([]int, len(g.Nodes))
	consumers := make([][]*Edge, len(g.Nodes))
	for _, n := range g.Nodes {
		p := n.Parallelism
		if p == 0 {
			p = def
		}
		if p < 1 || p > maxPar {
			return nil, fmt.Errorf("plan: operator %q: parallelism %d out of range 1..%d (max parallelism)", n.Name, p, maxPar)
		}
		par[n.ID] = p
		if n.Kind == Source && len(n.Inputs) > 0 {
			return nil, fmt.Errorf("plan: source %q has inputs", n.Name)
		}
		if n.Kind != Source && len(n.Inputs) == 0 {
			return nil, fmt.Errorf("plan: operator %q has no input", n.Name)
		}
		for _, e := range n.Inputs {
			if e.From.ID >= n.ID {
				return nil, fmt.Errorf("plan: edge %q -> %q goes backwards; the graph must be built in order", e.From.Name, n.Name)
			}
			// A broadcast input reaches every subtask whole: it
			// carries no keys (a keyed broadcast process's rules).
			if n.Keyed && e.Partitioning != Hash && e.Partitioning != Broadcast {
				return nil, fmt.Errorf("plan: keyed operator %q needs a keyed input (KeyBy), got %s from %q", n.Name, e.Partitioning, e.From.Name)
			}
			consumers[e.From.ID] = append(consumers[e.From.ID], e)
		}
	}

	// Chain n into its only consumer when the edge is forward with equal
	// parallelism and both ends have no other connection.
	chainedTo := make([]*Node, len(g.Nodes))
	chainedFrom := make([]bool, len(g.Nodes))
	if !g.DisableChaining {
		for _, n := range g.Nodes {
			cs := consumers[n.ID]
			if len(cs) != 1 {
				continue
			}
			e := cs[0]
			if e.Partitioning == Forward && par[n.ID] == par[e.To.ID] && len(e.To.Inputs) == 1 && e.To.Kind != Source {
				chainedTo[n.ID] = e.To
				chainedFrom[e.To.ID] = true
			}
		}
	}

	uids, err := assignUIDs(g)
	if err != nil {
		return nil, err
	}
	p := &Plan{MaxParallelism: maxPar, VertexOf: make([]*Vertex, len(g.Nodes)), UIDs: uids}
	for _, n := range g.Nodes {
		if chainedFrom[n.ID] {
			continue
		}
		v := &Vertex{ID: len(p.Vertices), Parallelism: par[n.ID]}
		for c := n; c != nil; c = chainedTo[c.ID] {
			v.Chain = append(v.Chain, c)
			p.VertexOf[c.ID] = v
		}
		p.Vertices = append(p.Vertices, v)
	}
	for _, v := range p.Vertices {
		for _, e := range v.Head().Inputs {
			src := p.VertexOf[e.From.ID]
			if src == nil {
				return nil, fmt.Errorf("plan: operator %q reads from %q, which is not in the graph", v.Head().Name, e.From.Name)
			}
			part := e.Partitioning
			if part == Forward && src.Parallelism != v.Parallelism {
				part = Rebalance
			}
			pe := &PhysicalEdge{Edge: e, Source: src, Target: v, Partitioning: part}
			v.Inputs = append(v.Inputs, pe)
			src.Outputs = append(src.Outputs, pe)
		}
	}
	return p, nil
}

// Channels returns the number of gate channels of target vertex v that edge
// e feeds: one per sending subtask, or one for a forward edge.
func (e *PhysicalEdge) Channels() int {
	if e.Partitioning == Forward {
		return 1
	}
	return e.Source.Parallelism
}

// InputChannels returns the number of gate channels of each subtask of
// v: those of all its input edges.
func (v *Vertex) InputChannels() int {
	n := 0
	for _, e := range v.Inputs {
		n += e.Channels()
	}
	return n
}

// String renders the plan for `weir run --explain`.
func (p *Plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "physical plan: %d tasks, max parallelism %d (key groups)\n", len(p.Vertices), p.MaxParallelism)
	for _, v := range p.Vertices {
		fmt.Fprintf(&b, "task %d [parallelism %d]: %s\n", v.ID, v.Parallelism, v.Name())
		for _, n := range v.Chain {
			keyed := ""
			if n.Keyed {
				keyed = ", keyed"
			}
			fmt.Fprintf(&b, "    %s %q%s\n", n.Kind, n.Name, keyed)
		}
		for _, e := range v.Inputs {
			port := ""
			if e.Port > 0 {
				port = fmt.Sprintf(" (side output %d)", e.Port)
			}
			fmt.Fprintf(&b, "    <- task %d %q%s via %s", e.Source.ID, e.From.Name, port, e.Partitioning)
			if len(v.Head().Inputs) > 1 || e.Input > 0 {
				fmt.Fprintf(&b, " into input %d", e.Input)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}
