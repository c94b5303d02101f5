package plan

import (
	"fmt"
	"strconv"
)

// An operator's identity across versions of a job is its uid: what a
// checkpoint or savepoint keys the operator's state by, so that a changed
// job (operators added, removed or chained differently) restores the
// state of every operator whose uid it still has. The user sets it
// (weir.UID); without one an operator's uid derives from its name:
// the name itself for its first operator, "name#2", "name#3" for later
// operators of the same name, in the order they were added.

// DefaultUIDs returns the uids of operators named names (in the order
// they were added) that set no uid of their own.
func DefaultUIDs(names []string) []string {
	seen := map[string]int{}
	out := make([]string, len(names))
	for i, n := range names {
		seen[n]++
		out[i] = n
		if k := seen[n]; k > 1 {
			out[i] = n + "#" + strconv.Itoa(k)
		}
	}
	return out
}

// assignUIDs returns the uid of every node of g by node ID: its own, or
// the one DefaultUIDs derives from its name. Two nodes with the same uid
// are an error naming both.
func assignUIDs(g *Graph) ([]string, error) {
	names := make([]string, len(g.Nodes))
	for i, n := range g.Nodes {
		names[i] = n.Name
	}
	uids := DefaultUIDs(names)
	by := map[string]*Node{}
	for i, n := range g.Nodes {
		if n.UID != "" {
			uids[i] = n.UID
		}
		if o, ok := by[uids[i]]; ok {
			return nil, fmt.Errorf("plan: operators %q and %q have the same uid %q: give each its own (weir.UID)", o.Name, n.Name, uids[i])
		}
		by[uids[i]] = n
	}
	return uids, nil
}

// UID returns the uid of node n of the plan. A plan not made by Build
// (a test's) has no UIDs: its nodes' uids are their own or their names.
func (p *Plan) UID(n *Node) string {
	if n.ID < len(p.UIDs) {
		return p.UIDs[n.ID]
	}
	if n.UID != "" {
		return n.UID
	}
	return n.Name
}
