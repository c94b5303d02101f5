package jobs

import (
	"context"
	"time"

	"github.com/weir-stream/weir/connector"
)

// slowly returns sink with every Write delayed by d: a slow external
// system, to see backpressure at work. Two-phase commit passes through.
func slowly[T any](sink connector.Sink[T], d time.Duration) connector.Sink[T] {
	if d <= 0 {
		return sink
	}
	return slowSink[T]{sink, d}
}

type slowSink[T any] struct {
	connector.Sink[T]
	d time.Duration
}

func (s slowSink[T]) Open(ctx context.Context, info connector.SubtaskInfo) (connector.Writer[T], error) {
	w, err := s.Sink.Open(ctx, info)
	if err != nil {
		return nil, err
	}
	if c, ok := w.(committingWriter[T]); ok {
		return slowCommitter[T]{c, s.d}, nil
	}
	return slowWriter[T]{w, s.d}, nil
}

type committingWriter[T any] interface {
	connector.Writer[T]
	connector.Committer
}

type slowWriter[T any] struct {
	connector.Writer[T]
	d time.Duration
}

func (w slowWriter[T]) Write(ctx context.Context, batch []T) error {
	if err := sleep(ctx, w.d); err != nil {
		return err
	}
	return w.Writer.Write(ctx, batch)
}

type slowCommitter[T any] struct {
	committingWriter[T]
	d time.Duration
}

func (w slowCommitter[T]) Write(ctx context.Context, batch []T) error {
	if err := sleep(ctx, w.d); err != nil {
		return err
	}
	return w.committingWriter.Write(ctx, batch)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
