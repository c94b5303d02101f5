package weir

import (
	"fmt"

	"github.com/weir-stream/weir/internal/operator"
	"github.com/weir-stream/weir/internal/operator/transform"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// RecordContext is what the function of ProcessStream sees while it
// handles a record: the record's event time, the main output and the
// side outputs (Output). It is valid only during that call.
type RecordContext[Out any] struct {
	ts   int64
	out  task.Collector[Out]
	side sideEmitter
}

// Timestamp returns the current record's event time (NoTimestamp when its
// stream has none).
func (c *RecordContext[Out]) Timestamp() int64 { return c.ts }

// Emit sends v to the main output with the current record's event time.
func (c *RecordContext[Out]) Emit(v Out) { c.out.Collect(c.ts, v) }

// EmitAt sends v to the main output with event time ts.
func (c *RecordContext[Out]) EmitAt(ts int64, v Out) { c.out.Collect(ts, v) }

func (c *RecordContext[Out]) sideEmitter() *sideEmitter { return &c.side }

// ProcessStream calls fn for every record of a stream without keys (as
// Flink's ProcessFunction on a DataStream): fn emits any number of
// records to the main output (ctx.Emit) and to side outputs (Output),
// which SideOutputOf the returned stream reads. It keeps no state and
// registers no timers; use Process on a KeyedStream for those. An error
// fails the job. Like FlatMap's, fn must emit the same records for the
// same input (it may run again on replayed input after a failure).
func ProcessStream[In, Out any](s Stream[In], fn func(ctx *RecordContext[Out], v In) error, os ...OpOption) Stream[Out] {
	so := newSideOutputs()
	node := transform.Process(func(outs []any) func(int64, In) {
		c := &RecordContext[Out]{out: operator.Out[Out](outs, 0)}
		c.side = sideEmitter{so: so, outs: outs, ts: func() int64 { return c.ts }, name: so.node.Name}
		return func(ts int64, v In) {
			c.ts = ts
			if err := fn(c, v); err != nil {
				task.Fail(fmt.Errorf("%s: %w", so.node.Name, err))
			}
		}
	})
	n := s.p.addNode(opts("process-stream", os), plan.Operator, 1, node)
	s.p.attachSides(n, so)
	s.p.eventTimeRole(n, maySetTime, "")
	connect(s, n, 0, plan.Forward, nil)
	return newStream[Out](s.p, n, 0)
}
