package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/weir-stream/weir/connector"
)

// throttled limits each subtask of a source to rate/parallelism records
// per second of wall-clock time. Its positions are the source's: they
// move to another parallelism if the source's do.
type throttled[T any] struct {
	src  connector.Source[T]
	rate float64
}

// Rescale moves the positions through the source (connector.Rescaler).
func (s throttled[T]) Rescale(old []connector.Position, n int) ([]connector.Position, error) {
	r, ok := s.src.(connector.Rescaler)
	if !ok {
		return nil, fmt.Errorf("its connector (%T) cannot move positions to another parallelism (it is no connector.Rescaler)", s.src)
	}
	return r.Rescale(old, n)
}

func (s throttled[T]) Open(ctx context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[T], error) {
	r, err := s.src.Open(ctx, info, pos)
	if err != nil {
		return nil, err
	}
	return &throttledReader[T]{Reader: r, rate: s.rate / float64(max(info.Parallelism, 1)), start: time.Now()}, nil
}

type throttledReader[T any] struct {
	connector.Reader[T]
	rate  float64
	start time.Time
	read  int64
}

// Read reads no more records than the rate allows by now; it returns 0,
// nil (after a short wait) when it must hold back.
func (r *throttledReader[T]) Read(ctx context.Context, buf []T) (int, error) {
	allowed := int64(time.Since(r.start).Seconds()*r.rate) - r.read
	if allowed <= 0 {
		t := time.NewTimer(5 * time.Millisecond)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-t.C:
		}
		return 0, nil
	}
	n, err := r.Reader.Read(ctx, buf[:min(int64(len(buf)), allowed)])
	r.read += int64(n)
	return n, err
}

// Deterministic reports whether the source replays the same records in the
// same order from a position (connector.Deterministic): throttling changes
// when records come, not which.
func (s throttled[T]) Deterministic() bool {
	d, ok := s.src.(connector.Deterministic)
	return ok && d.Deterministic()
}
