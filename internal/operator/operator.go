// Package operator holds what the operator implementations under it
// share: the typed edge that carries records between tasks and the
// collector of an operator's output port. The implementations themselves
// live one concept per package below it (transform, source, sink, keyed,
// ...); each takes functions and codecs, never a type of the public API,
// and is a task.NodeImpl the root package adds to a pipeline's graph.
package operator

import (
	"fmt"
	"reflect"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// Edge is the typed implementation (task.EdgeImpl) of an edge carrying
// records of type T. Codec encodes them; nil takes codec.For[T] when the
// edge is built. Hash, for a hash edge, returns a record's key hash.
type Edge[T any] struct {
	Codec codec.Codec[T]
	Hash  func(T) uint64
}

func (e *Edge[T]) resolve() (codec.Codec[T], error) {
	if e.Codec != nil {
		return e.Codec, nil
	}
	c, err := codec.For[T]()
	if err != nil {
		return nil, fmt.Errorf("records of type %v cannot cross a task boundary: %w (set one with Stream.WithCodec)", reflect.TypeFor[T](), err)
	}
	return c, nil
}

// NewWriter returns the partitioning writer of the edge's sending side.
func (e *Edge[T]) NewWriter(ctx *task.Context, part plan.Partitioning, chans []exchange.Channel) (any, task.ChannelWriter, error) {
	c, err := e.resolve()
	if err != nil {
		return nil, nil, err
	}
	w := task.NewWriter(ctx, c, part, e.Hash, chans)
	return w, w, nil
}

// NewDecoder returns the decoder of the edge's receiving side, feeding
// target, a task.Collector[T].
func (e *Edge[T]) NewDecoder(target any, where string) (task.Decoder, error) {
	c, err := e.resolve()
	if err != nil {
		return nil, err
	}
	return task.NewDecoder(c, target.(task.Collector[T]), where), nil
}

// Fanout combines the collectors cs (each a task.Collector[T]) into one.
func (e *Edge[T]) Fanout(cs []any) any {
	f := make(task.Fanout[T], len(cs))
	for i, c := range cs {
		f[i] = c.(task.Collector[T])
	}
	return f
}

// Out returns the collector of output port port among an operator's
// outputs (as task.NodeImpl.Build receives them), or one that discards
// when nothing reads the port.
func Out[T any](outs []any, port int) task.Collector[T] {
	if port < len(outs) && outs[port] != nil {
		return outs[port].(task.Collector[T])
	}
	return task.Discard[T]{}
}
