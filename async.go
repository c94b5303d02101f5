package weir

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/operator/async"
	"github.com/weir-stream/weir/internal/plan"
)

// AsyncConfig configures an asynchronous call operator (AsyncOrdered,
// AsyncUnordered).
type AsyncConfig[In, Out any] struct {
	// Capacity is the most records in flight per subtask: called, or
	// finished and waiting to be emitted. A record beyond it waits for
	// room, which holds the operator's input back. Default 100.
	Capacity int
	// Timeout bounds each call: its context is done after it. Zero
	// lets a call run until the job stops.
	Timeout time.Duration
	// OnTimeout gives the result of a record whose call timed out (for
	// instance a default). Nil: a timeout fails the job, which restarts
	// from its last checkpoint as after any failure.
	OnTimeout func(in In) (Out, error)
	// Codec stores the records in flight in checkpoints; nil takes
	// codec.For[In].
	Codec codec.Codec[In]
}

// AsyncOrdered calls call for every record of s, up to c.Capacity calls
// at once per subtask, and emits each result with its record's
// timestamp in the order of the records (Flink's
// AsyncDataStream.orderedWait).
//
// call runs on the operator's own goroutines, never on more than
// c.Capacity of them per subtask, all stopped when the job stops; it must
// be safe to run concurrently and must return soon after its context is
// done. An error it returns fails the job, unless the call timed out and
// c.OnTimeout is set; a panic in it is an error.
//
// A watermark waits for the results of the records before it, so no
// result comes out late. A checkpoint does not wait: the records in
// flight are stored in it, and a job restored from it calls again for
// each of them (so exactly-once output needs calls that may be
// repeated, such as lookups). Restored at another parallelism, each old
// subtask's records in flight go to one new subtask.
func AsyncOrdered[In, Out any](s Stream[In], call func(ctx context.Context, in In) (Out, error), c AsyncConfig[In, Out], os ...OpOption) Stream[Out] {
	return asyncCall(s, call, c, true, opts("async-ordered", os))
}

// AsyncUnordered is AsyncOrdered with results emitted as their calls
// finish (Flink's AsyncDataStream.unorderedWait): they may reorder among
// the records between two watermarks, never across one.
func AsyncUnordered[In, Out any](s Stream[In], call func(ctx context.Context, in In) (Out, error), c AsyncConfig[In, Out], os ...OpOption) Stream[Out] {
	return asyncCall(s, call, c, false, opts("async-unordered", os))
}

func asyncCall[In, Out any](s Stream[In], call func(context.Context, In) (Out, error), c AsyncConfig[In, Out], ordered bool, oc opConfig) Stream[Out] {
	if c.Capacity == 0 {
		c.Capacity = 100
	}
	if c.Capacity < 0 {
		s.p.setErr(fmt.Errorf("async operator %q: capacity %d: want at least 1", oc.name, c.Capacity))
	}
	if c.Timeout < 0 {
		s.p.setErr(fmt.Errorf("async operator %q: timeout %v: want 0 (none) or more", oc.name, c.Timeout))
	}
	if call == nil {
		s.p.setErr(fmt.Errorf("async operator %q: no call", oc.name))
	}
	if c.Codec == nil {
		var err error
		if c.Codec, err = codec.For[In](); err != nil {
			s.p.setErr(fmt.Errorf("async operator %q: records of type %v cannot be checkpointed in flight: %w (set AsyncConfig.Codec)", oc.name, reflect.TypeFor[In](), err))
		}
	}
	node := &async.Node[In, Out]{Call: call, Capacity: max(c.Capacity, 1), Timeout: c.Timeout, OnTimeout: c.OnTimeout, Ordered: ordered, Codec: c.Codec}
	n := s.p.addNode(oc, plan.Operator, 1, node)
	connect(s, n, 0, plan.Forward, nil)
	return newStream[Out](s.p, n, 0)
}
