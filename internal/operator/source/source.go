// Package source implements the source operator: each subtask opens the
// connector's reader for its share of the input, reads batches of up to
// 1024 records, gives them event times and pushes them into its chain,
// and reports the watermark that trails the highest event time.
package source

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/operator"
	"github.com/weir-stream/weir/internal/task"
)

// NoTimestamp is the event time of records of a source without an
// event-time function.
const NoTimestamp = dataflow.MinWatermark

// New returns the node reading src. ts, if not nil, gives each record its
// event time in epoch milliseconds, and the watermark trails the highest
// event time seen by delay milliseconds; without ts records carry
// NoTimestamp and the source emits no watermark of its own.
func New[T any](src connector.Source[T], ts func(T) int64, delay int64) task.NodeImpl {
	return &node[T]{src: src, ts: ts, delay: delay}
}

// NewTimestamped returns the node reading src, whose readers give each
// record its event time (connector.Timestamper), with the watermark
// trailing the highest event time seen by delay milliseconds. Open fails
// with a configuration error if src's reader has no timestamps.
func NewTimestamped[T any](src connector.Source[T], delay int64) task.NodeImpl {
	return &node[T]{src: src, own: true, delay: delay}
}

type node[T any] struct {
	src   connector.Source[T]
	ts    func(T) int64
	own   bool // event times from the reader (connector.Timestamper)
	delay int64
}

// timed reports whether records get event times.
func (s *node[T]) timed() bool { return s.ts != nil || s.own }

func (s *node[T]) Build(ctx *task.Context, outs []any) (task.Built, error) {
	r := &runner[T]{node: s, next: operator.Out[T](outs, 0), buf: make([]T, 1024), maxTS: dataflow.MinWatermark}
	return task.Built{Op: task.Base{}, Source: r}, nil
}

// runner is the task.SourceRunner of one source subtask.
type runner[T any] struct {
	node   *node[T]
	next   task.Collector[T]
	reader connector.Reader[T]
	et     connector.EventTimer[T] // the reader's per-split event time, if it tracks it
	tsr    connector.Timestamper   // the reader's own event times, with NewTimestamped
	ctx    *task.Context
	buf    []T
	n      int // records read, not yet emitted
	maxTS  int64
	eof    bool
}

func (r *runner[T]) Open(ctx *task.Context, pos []byte) error {
	r.ctx = ctx
	rd, err := r.node.src.Open(ctx.Ctx, connector.SubtaskInfo{Operator: ctx.Operator, Subtask: ctx.Subtask, Parallelism: ctx.Parallelism, Attempt: ctx.Attempt}, pos)
	if err != nil {
		return err
	}
	r.reader = rd
	r.et, r.tsr = nil, nil
	if r.node.own {
		tsr, ok := rd.(connector.Timestamper)
		if !ok {
			rd.Close()
			r.reader = nil
			return connector.ConfigError(fmt.Errorf("source %q takes event times from its connector, but its reader (%T) has none (it is no connector.Timestamper); use WithTimestamps", ctx.Operator, rd))
		}
		tsr.UseTimestamps()
		r.tsr = tsr
	}
	if et, ok := rd.(connector.EventTimer[T]); ok && r.node.timed() {
		if !r.node.own {
			et.SetEventTime(r.node.ts)
		}
		r.et = et
	}
	return nil
}

func (r *runner[T]) Read() (int, bool, error) {
	n, err := r.reader.Read(r.ctx.Ctx, r.buf)
	if err != nil {
		if errors.Is(err, io.EOF) {
			r.eof = true
			return 0, true, nil
		}
		return 0, false, fmt.Errorf("reading source %q: %w", r.ctx.Operator, err)
	}
	if r.tsr != nil && len(r.tsr.Timestamps()) != n {
		return 0, false, fmt.Errorf("reading source %q: its reader returned %d records but %d timestamps", r.ctx.Operator, n, len(r.tsr.Timestamps()))
	}
	r.n = n
	return n, false, nil
}

func (r *runner[T]) Position() []byte { return r.reader.Position() }

func (r *runner[T]) Emit() {
	n := r.n
	r.n = 0
	r.ctx.Metrics.RecordsIn.Add(int64(n))
	batch := r.buf[:n]
	if r.tsr != nil {
		tss := r.tsr.Timestamps()
		for i := range batch {
			t := tss[i]
			if t > r.maxTS {
				r.maxTS = t
			}
			r.next.Collect(t, batch[i])
		}
	} else if ts := r.node.ts; ts != nil {
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

func (r *runner[T]) Watermark() int64 {
	if r.et != nil {
		if p := r.et.EventTimeProgress(); p != dataflow.MinWatermark {
			return p - r.node.delay - 1
		}
		return dataflow.MinWatermark
	}
	if !r.node.timed() || r.maxTS == dataflow.MinWatermark {
		return dataflow.MinWatermark
	}
	return r.maxTS - r.node.delay - 1
}

// WatermarkState is the highest event time seen; see
// task.WatermarkGenerator. A reader that tracks event time itself
// (connector.EventTimer) keeps its progress with its position.
func (r *runner[T]) WatermarkState() []byte { return binary.AppendVarint(nil, r.maxTS) }

// RestoreWatermarkState restores the highest event time seen.
func (r *runner[T]) RestoreWatermarkState(data []byte) error {
	v, n := binary.Varint(data)
	if n <= 0 || n != len(data) {
		return fmt.Errorf("the highest event time seen: %w", codec.ErrCorrupt)
	}
	r.maxTS = v
	return nil
}

func (r *runner[T]) Close() error {
	if r.reader == nil {
		return nil
	}
	err := r.reader.Close()
	r.reader = nil
	return err
}

// Deterministic reports whether the source's connector replays the same
// records in the same order from a position (connector.Deterministic).
func (s *node[T]) Deterministic() bool {
	d, ok := s.src.(connector.Deterministic)
	return ok && d.Deterministic()
}

// RescalePositions moves the old subtasks' positions to n subtasks
// through the connector (task.PositionRescaler, connector.Rescaler).
func (s *node[T]) RescalePositions(old [][]byte, n int) ([][]byte, error) {
	r, ok := s.src.(connector.Rescaler)
	if !ok {
		return nil, fmt.Errorf("its connector (%T) cannot move positions to another parallelism (it is no connector.Rescaler)", s.src)
	}
	ps := make([]connector.Position, len(old))
	for i, p := range old {
		ps[i] = p
	}
	moved, err := r.Rescale(ps, n)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(moved))
	for i, p := range moved {
		out[i] = p
	}
	return out, nil
}
