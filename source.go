package weir

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// SourceOption configures a source.
type SourceOption[T any] func(*sourceNode[T])

// WithTimestamps gives every record read the event time ts(record), in
// epoch milliseconds, and makes the source emit watermarks that trail the
// highest event time seen by maxOutOfOrderness: a record may arrive that
// much later than a record with a higher timestamp without being late.
func WithTimestamps[T any](ts func(T) int64, maxOutOfOrderness time.Duration) SourceOption[T] {
	return func(s *sourceNode[T]) {
		s.ts = ts
		s.delay = maxOutOfOrderness.Milliseconds()
	}
}

// SourceName names the source operator.
func SourceName[T any](name string) SourceOption[T] { return func(s *sourceNode[T]) { s.name = name } }

// SourceParallelism sets the source's number of subtasks.
func SourceParallelism[T any](n int) SourceOption[T] {
	return func(s *sourceNode[T]) { s.parallelism = n }
}

// NoTimestamp is the event time of records from a source without
// WithTimestamps. Event-time operators reject such records.
const NoTimestamp = dataflow.MinWatermark

// FromSource adds a source reading records of type T. Each of its subtasks
// opens the source's reader for its share of the input.
func FromSource[T any](p *Pipeline, name string, src connector.Source[T], os ...SourceOption[T]) Stream[T] {
	s := &sourceNode[T]{src: src, name: name}
	for _, o := range os {
		o(s)
	}
	n := p.addNode(opConfig{name: s.name, parallelism: s.parallelism}, plan.Source, 1, s)
	return newStream[T](p, n, 0)
}

type sourceNode[T any] struct {
	src         connector.Source[T]
	name        string
	parallelism int
	ts          func(T) int64
	delay       int64
}

func (s *sourceNode[T]) Build(ctx *task.Context, outs []any) (task.Built, error) {
	r := &sourceRunner[T]{node: s, next: out[T](outs, 0), buf: make([]T, 1024), maxTS: dataflow.MinWatermark}
	return task.Built{Op: task.Base{}, Source: r}, nil
}

type sourceRunner[T any] struct {
	node   *sourceNode[T]
	next   task.Collector[T]
	reader connector.Reader[T]
	et     connector.EventTimer[T] // the reader's per-split event time, if it tracks it
	ctx    *task.Context
	buf    []T
	n      int // records read, not yet emitted
	maxTS  int64
	eof    bool
}

func (r *sourceRunner[T]) Open(ctx *task.Context, pos []byte) error {
	r.ctx = ctx
	rd, err := r.node.src.Open(ctx.Ctx, connector.SubtaskInfo{Operator: ctx.Operator, Subtask: ctx.Subtask, Parallelism: ctx.Parallelism, Attempt: ctx.Attempt}, pos)
	if err != nil {
		return err
	}
	r.reader = rd
	r.et = nil
	if et, ok := rd.(connector.EventTimer[T]); ok && r.node.ts != nil {
		et.SetEventTime(r.node.ts)
		r.et = et
	}
	return nil
}

func (r *sourceRunner[T]) Read() (int, bool, error) {
	n, err := r.reader.Read(r.ctx.Ctx, r.buf)
	if err != nil {
		if errors.Is(err, io.EOF) {
			r.eof = true
			return 0, true, nil
		}
		return 0, false, fmt.Errorf("reading source %q: %w", r.ctx.Operator, err)
	}
	r.n = n
	return n, false, nil
}

func (r *sourceRunner[T]) Position() []byte { return r.reader.Position() }

func (r *sourceRunner[T]) Emit() {
	n := r.n
	r.n = 0
	r.ctx.Metrics.RecordsIn.Add(int64(n))
	batch := r.buf[:n]
	if ts := r.node.ts; ts != nil {
		for i := range batch {
			t := ts(batch[i])
			if t > r.maxTS {
				r.maxTS = t
			}
			r.next.Collect(t, batch[i])
		}
	} else {
		for i := range batch {
			r.next.Collect(NoTimestamp, batch[i])
		}
	}
	clear(batch) // drop references held by the records
}

func (r *sourceRunner[T]) Watermark() int64 {
	if r.et != nil {
		if p := r.et.EventTimeProgress(); p != dataflow.MinWatermark {
			return p - r.node.delay - 1
		}
		return dataflow.MinWatermark
	}
	if r.node.ts == nil || r.maxTS == dataflow.MinWatermark {
		return dataflow.MinWatermark
	}
	return r.maxTS - r.node.delay - 1
}

func (r *sourceRunner[T]) Close() error {
	if r.reader == nil {
		return nil
	}
	err := r.reader.Close()
	r.reader = nil
	return err
}

// Deterministic reports whether the source's connector replays the same
// records in the same order from a position (connector.Deterministic).
func (s *sourceNode[T]) Deterministic() bool {
	d, ok := s.src.(connector.Deterministic)
	return ok && d.Deterministic()
}
