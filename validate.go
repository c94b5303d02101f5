package weir

import (
	"fmt"

	"github.com/weir-stream/weir/internal/plan"
)

// This file is the checks of a pipeline's graph made before it runs (and
// by Explain), which find mistakes the types of the API cannot: an
// event-time operator reading records that carry no event time.
//
// Each operator has a role for event time. Sources with WithTimestamps,
// AssignTimestamps and windows stamp their output; sources without
// WithTimestamps give records none; process functions may stamp what they
// emit (EmitAt), so after them it is unknown; every other operator passes
// its inputs' on. An event-time operator (windows, interval joins,
// deduplication) fails the build when one of its inputs is known to carry
// no event time; records get checked again as they arrive.

// timeRole is what an operator does with event time.
type timeRole int

const (
	passesTime timeRole = iota // output carries what the inputs carry
	stampsTime                 // output carries event time
	clearsTime                 // output carries no event time
	maySetTime                 // output carries event time if the inputs do, else unknown
	needsTime                  // inputs must carry event time; output carries it
)

// roleOf is an operator's role, with what it is for errors.
type roleOf struct {
	role timeRole
	what string
}

// eventTimeRole records n's role; what says, for needsTime, what needs it.
func (p *Pipeline) eventTimeRole(n *plan.Node, r timeRole, what string) {
	if p.timeRoles == nil {
		p.timeRoles = map[*plan.Node]roleOf{}
	}
	p.timeRoles[n] = roleOf{r, what}
}

// timing is what is known of the event time of an operator's output.
type timing int

const (
	timed timing = iota
	unknownTime
	untimed
)

// validate checks the graph as the file comment says. Operators are
// added after the streams they read, so one pass in order sees every
// operator's inputs before it.
func (p *Pipeline) validate() error {
	known := make(map[*plan.Node]timing, len(p.g.Nodes))
	for _, n := range p.g.Nodes {
		in := timed
		for _, e := range n.Inputs {
			t, ok := known[e.From]
			if !ok {
				t = unknownTime
			}
			in = max(in, t)
		}
		r := p.timeRoles[n]
		out := in
		switch r.role {
		case stampsTime:
			out = timed
		case clearsTime:
			out = untimed
		case maySetTime:
			out = min(in, unknownTime)
		case needsTime:
			if in == untimed {
				return fmt.Errorf("operator %q (%s) needs event time, but its input has none: give the source WithTimestamps, or assign it with AssignTimestamps before %q", n.Name, r.what, n.Name)
			}
			out = timed
		}
		known[n] = out
	}
	return nil
}
