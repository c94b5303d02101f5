package connector

import (
	"context"
	"fmt"
	"time"
)

// Throttle limits each subtask of src to rate/parallelism records per
// second of wall-clock time (a rate of 0 or less returns src). Its
// positions are src's: they move to another parallelism if src's do
// (Rescaler), and it replays what src replays (Deterministic), since
// throttling changes when records come, not which.
func Throttle[T any](src Source[T], rate float64) Source[T] {
	if rate <= 0 {
		return src
	}
	return throttled[T]{src: src, rate: rate}
}

type throttled[T any] struct {
	src  Source[T]
	rate float64
}

// Rescale moves the positions through the source (Rescaler).
func (s throttled[T]) Rescale(old []Position, n int) ([]Position, error) {
	r, ok := s.src.(Rescaler)
	if !ok {
		return nil, fmt.Errorf("its connector (%T) cannot move positions to another parallelism (it is no Rescaler)", s.src)
	}
	return r.Rescale(old, n)
}

func (s throttled[T]) Open(ctx context.Context, info SubtaskInfo, pos Position) (Reader[T], error) {
	r, err := s.src.Open(ctx, info, pos)
	if err != nil {
		return nil, err
	}
	return keepAbilities(r, &throttledReader[T]{Reader: r, rate: s.rate / float64(max(info.Parallelism, 1)), start: time.Now()}), nil
}

// keepAbilities returns t with the event-time abilities of the reader it
// wraps (EventTimer, Timestamper), which throttling does not change: a
// throttled reader of splits still holds its watermark at its slowest
// split.
func keepAbilities[T any](r Reader[T], t *throttledReader[T]) Reader[T] {
	et, isET := r.(EventTimer[T])
	ts, isTS := r.(Timestamper)
	switch {
	case isET && isTS:
		return struct {
			*throttledReader[T]
			EventTimer[T]
			throttledTimestamps[T]
		}{t, et, throttledTimestamps[T]{t, ts}}
	case isET:
		return struct {
			*throttledReader[T]
			EventTimer[T]
		}{t, et}
	case isTS:
		return struct {
			*throttledReader[T]
			throttledTimestamps[T]
		}{t, throttledTimestamps[T]{t, ts}}
	}
	return t
}

// throttledTimestamps are the timestamps of a throttled reader: none
// after a Read that held back without reading.
type throttledTimestamps[T any] struct {
	r  *throttledReader[T]
	ts Timestamper
}

func (t throttledTimestamps[T]) UseTimestamps() { t.ts.UseTimestamps() }

func (t throttledTimestamps[T]) Timestamps() []int64 {
	if t.r.held {
		return nil
	}
	return t.ts.Timestamps()
}

type throttledReader[T any] struct {
	Reader[T]
	rate  float64
	start time.Time
	read  int64
	held  bool // the last Read held back without reading
}

// Read reads no more records than the rate allows by now; it returns 0,
// nil (after a short wait) when it must hold back.
func (r *throttledReader[T]) Read(ctx context.Context, buf []T) (int, error) {
	allowed := int64(time.Since(r.start).Seconds()*r.rate) - r.read
	r.held = allowed <= 0
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
// same order from a position (Deterministic): throttling changes
// when records come, not which.
func (s throttled[T]) Deterministic() bool {
	d, ok := s.src.(Deterministic)
	return ok && d.Deterministic()
}
