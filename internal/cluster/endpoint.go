package cluster

import (
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/task"
	"github.com/weir-stream/weir/internal/transport"
)

type transportEndpoint = transport.Endpoint

// register creates the data plane endpoint of an attempt's runtime: remote
// senders deliver into its local gates, and every element a local subtask
// takes returns credit to the sender it came from. A broken connection
// fails the attempt. The input logs of active standbys' primaries
// (task.Runtime.LogGate) arrive as vertex V+n, where n counts the plan's
// vertices.
func register(node *transport.Node, key string, rt *task.Runtime) (*transport.Endpoint, error) {
	pl := rt.Plan()
	n := len(pl.Vertices)
	gate := func(v, i int) *exchange.Gate {
		if v >= n && v < 2*n && i >= 0 && i < pl.Vertices[v-n].Parallelism {
			return rt.LogGate(dataflow.SubtaskID{Vertex: v - n, Subtask: i})
		}
		if v < 0 || v >= n || i < 0 || i >= pl.Vertices[v].Parallelism {
			return nil
		}
		return rt.Gate(dataflow.SubtaskID{Vertex: v, Subtask: i})
	}
	ep, err := node.Register(key, rt.QueueCapacity(), gate, func(err error) { rt.Kill(dataflow.SubtaskID{}, err) })
	if err != nil {
		return nil, err
	}
	for _, v := range rt.Plan().Vertices {
		for i := range v.Parallelism {
			if g := rt.Gate(dataflow.SubtaskID{Vertex: v.ID, Subtask: i}); g != nil {
				g.OnTake(func(ch int) { ep.Credit(v.ID, i, ch) })
			}
			if g := rt.LogGate(dataflow.SubtaskID{Vertex: v.ID, Subtask: i}); g != nil {
				g.OnTake(func(ch int) { ep.Credit(n+v.ID, i, ch) })
			}
		}
	}
	return ep, nil
}
