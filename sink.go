package weir

import (
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// To writes the stream to a sink. Each sink subtask opens its own writer
// and hands it the records in batches.
func To[T any](s Stream[T], name string, sink connector.Sink[T], os ...OpOption) {
	c := opts(name, os)
	n := s.p.addNode(c, plan.Sink, 0, &sinkNode[T]{sink: sink})
	connect(s, n, 0, plan.Forward, nil)
}

type sinkNode[T any] struct{ sink connector.Sink[T] }

func (s *sinkNode[T]) Build(*task.Context, []any) (task.Built, error) {
	op := &sinkOp[T]{sink: s.sink, batch: make([]T, 0, 1024)}
	return task.Built{Op: op, Inputs: []any{op}}, nil
}

type sinkOp[T any] struct {
	sink  connector.Sink[T]
	w     connector.Writer[T]
	ctx   *task.Context
	batch []T
}

func (s *sinkOp[T]) Open(ctx *task.Context) error {
	s.ctx = ctx
	w, err := s.sink.Open(ctx.Ctx, connector.SubtaskInfo{Operator: ctx.Operator, Subtask: ctx.Subtask, Parallelism: ctx.Parallelism})
	if err != nil {
		return err
	}
	s.w = w
	return nil
}

func (s *sinkOp[T]) Collect(_ int64, v T) {
	s.batch = append(s.batch, v)
	if len(s.batch) == cap(s.batch) {
		if err := s.write(); err != nil {
			task.Fail(err)
		}
	}
}

func (s *sinkOp[T]) write() error {
	if len(s.batch) == 0 {
		return nil
	}
	err := s.w.Write(s.ctx.Ctx, s.batch)
	s.ctx.Metrics.Written.Add(int64(len(s.batch)))
	clear(s.batch)
	s.batch = s.batch[:0]
	return err
}

// Flush writes buffered records when the task's input runs dry.
func (s *sinkOp[T]) Flush() error { return s.write() }

func (s *sinkOp[T]) Watermark(wm int64) int64 { return wm }

func (s *sinkOp[T]) EndInput() error {
	if err := s.write(); err != nil {
		return err
	}
	return s.w.Flush(s.ctx.Ctx)
}

func (s *sinkOp[T]) Close() error {
	if s.w == nil {
		return nil
	}
	err := s.w.Close()
	s.w = nil
	return err
}
