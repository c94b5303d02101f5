// Package eventtime implements the operator that assigns event times and
// generates watermarks within a pipeline, after its sources: it stamps
// every record with the time a function reads from it and, instead of
// forwarding its input's watermarks, emits watermarks that trail the
// highest time it has seen by a bounded out-of-orderness, as a source
// given timestamps does.
package eventtime

import (
	"encoding/binary"
	"fmt"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/operator"
	"github.com/weir-stream/weir/internal/task"
)

// Generator is the watermark of bounded out-of-orderness, as pure state:
// it trails the highest event time seen by Delay milliseconds. The zero
// Max means no record seen; New sets it.
type Generator struct {
	Max   int64
	Delay int64
}

// NewGenerator returns a generator that has seen no record.
func NewGenerator(delay int64) Generator { return Generator{Max: dataflow.MinWatermark, Delay: delay} }

// Observe records an event time.
func (g *Generator) Observe(ts int64) { g.Max = max(g.Max, ts) }

// Watermark returns the watermark the times seen allow: every later record
// whose time is at most Delay below the highest seen is later than it.
func (g *Generator) Watermark() int64 {
	if g.Max == dataflow.MinWatermark {
		return dataflow.MinWatermark
	}
	return g.Max - g.Delay - 1
}

// Node assigns the event time TS(record) to every record and generates
// the watermark of its output (task.WatermarkAssigner): every watermark
// interval while it rises (after every record when the interval is below
// a millisecond), and the final watermark when its input ends.
//
// With Idleness above zero it is a task.IdleAssigner: a subtask that saw
// no record for at least Idleness milliseconds of processing time (and
// less than twice that) is idle until its next record.
type Node[T any] struct {
	TS       func(T) int64
	Delay    int64
	Idleness int64
}

// Redistribution: each old subtask's highest time goes to one new
// subtask, which keeps it only at the parallelism it was taken at. At
// another, a subtask may read input another one did before, behind the
// time its state holds, so it starts from no time seen: the rescale
// makes no record late.
func (*Node[T]) Redistribution() task.Redistribution { return task.Reassigned }

func (n *Node[T]) Build(ctx *task.Context, outs []any) (task.Built, error) {
	op := &op[T]{node: n, next: operator.Out[T](outs, 0), gen: NewGenerator(n.Delay), now: ctx.Now,
		interval: ctx.WatermarkInterval.Milliseconds(), emitted: dataflow.MinWatermark, name: ctx.Operator, par: ctx.Parallelism}
	if n.Idleness > 0 {
		iop := &idleOp[T]{op: op}
		iop.since = op.now()
		return task.Built{Op: iop, Inputs: []any{iop}}, nil
	}
	return task.Built{Op: op, Inputs: []any{op}}, nil
}

type op[T any] struct {
	task.Base
	node     *Node[T]
	next     task.Collector[T]
	gen      Generator
	now      func() int64
	interval int64 // milliseconds between watermarks; 0: after every record
	emitted  int64 // the watermark Watermark returned last
	last     int64 // when the timer fired last
	ended    bool  // the input's watermark reached the end of time
	name     string
	par      int // the subtask's parallelism
}

func (o *op[T]) Collect(_ int64, v T) {
	ts := o.node.TS(v)
	o.gen.Observe(ts)
	o.next.Collect(ts, v)
}

// Watermark returns the generated watermark; the input's is dropped but
// for the final one, which ends event time downstream too.
func (o *op[T]) Watermark(wm int64) int64 {
	if wm == dataflow.MaxWatermark {
		o.ended = true
	}
	if o.ended {
		o.emitted = dataflow.MaxWatermark
		return o.emitted
	}
	o.emitted = max(o.emitted, o.gen.Watermark())
	return o.emitted
}

// NextProcessingTime asks for a timer one interval after the last while
// the generated watermark is ahead of the one forwarded.
func (o *op[T]) NextProcessingTime() (int64, bool) {
	if o.ended || o.gen.Watermark() <= o.emitted {
		return 0, false
	}
	return o.last + o.interval, true
}

func (o *op[T]) FireProcessingTime(now int64) { o.last = now }

// AssignsWatermarks marks the operator as a task.WatermarkAssigner.
func (*op[T]) AssignsWatermarks() {}

// Snapshot holds the highest event time seen, with the parallelism, so
// that an operator restored at the same parallelism generates the same
// watermarks.
func (o *op[T]) Snapshot(task.SnapshotOptions) (func(dst []byte) (task.Encoded, error), error) {
	data := binary.AppendUvarint(nil, uint64(o.par))
	data = binary.AppendVarint(data, o.gen.Max)
	return task.Taken(data), nil
}

// Restore sets the highest event time seen, unless the snapshot was
// taken at another parallelism (see Redistribution).
func (o *op[T]) Restore(data []byte) error {
	par, n := binary.Uvarint(data)
	if n <= 0 {
		return fmt.Errorf("%s: restoring the highest event time seen: %w", o.name, codec.ErrCorrupt)
	}
	v, m := binary.Varint(data[n:])
	if m <= 0 || n+m != len(data) {
		return fmt.Errorf("%s: restoring the highest event time seen: %w", o.name, codec.ErrCorrupt)
	}
	if int(par) == o.par {
		o.gen.Max = v
	}
	return nil
}

// idleOp is op with idleness (task.IdleAssigner). A record marks it seen;
// a timer every Idleness milliseconds while active clears the mark, and
// finds it idle when no record came since the previous one.
type idleOp[T any] struct {
	*op[T]
	seen  bool  // a record came since the idleness timer fired last
	since int64 // when the idleness timer fired last, or the op went active
	idle  bool
}

func (o *idleOp[T]) Collect(ts int64, v T) {
	o.seen = true
	if o.idle {
		o.idle = false
		o.since = o.now()
	}
	o.op.Collect(ts, v)
}

// Idle reports whether no record came for the idleness timeout.
func (o *idleOp[T]) Idle() bool { return o.idle && !o.ended }

func (o *idleOp[T]) NextProcessingTime() (int64, bool) {
	t, ok := o.op.NextProcessingTime()
	if o.idle || o.ended {
		return t, ok
	}
	check := o.since + o.node.Idleness
	if !ok || check < t {
		return check, true
	}
	return t, true
}

func (o *idleOp[T]) FireProcessingTime(now int64) {
	o.op.FireProcessingTime(now)
	if o.idle || now < o.since+o.node.Idleness {
		return
	}
	if o.seen {
		o.seen, o.since = false, now
		return
	}
	o.idle = true
}
