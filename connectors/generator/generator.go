// Package generator provides replayable sources that compute their records
// from an index: record i of a generator is fn(i), so a generator yields the
// same records every time it runs, needs no input and rewinds for free.
//
// # Splitting
//
// The indices are split across the n subtasks of the source by striding:
// subtask s yields the records with indices s, s+n, s+2n, ... in that order.
// Striding keeps the subtasks' progress through the index space, and hence
// through any event time derived from it, roughly aligned.
//
// # Positions
//
// A Position is the index of the next record the subtask would yield,
// encoded as a uvarint. Reopening at it resumes exactly there. Positions are
// only valid for the same subtask at the same parallelism; Open rejects a
// corrupt position or one that belongs to another subtask.
//
// # Rescaling
//
// A generator is a connector.Rescaler: a job restored at another
// parallelism of the source hands its positions to Rescale, which splits
// what is left of every old subtask's strided sequence into finer strides
// and deals them out to the new subtasks. A subtask opened at such a
// position reads its strides merged in index order, so event times derived
// from the index stay in order. Its position lists its strides (see
// rescale.go).
//
// # Rate
//
// A generator runs as fast as it is read unless WithRate throttles it by
// wall-clock time. Unthrottled, Read does no allocation and no work per
// record beyond calling fn.
package generator

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/weir-stream/weir/connector"
)

// Option configures a generator.
type Option func(*options)

type options struct {
	rate float64 // records per second for the whole source; 0 = unlimited
}

// WithRate throttles the generator to perSecond records per second in total,
// shared evenly by its subtasks. The throttle is a token bucket refilled by
// the wall clock with a burst of about 10 ms of records, so records come in
// batches rather than one sleep per record. Open fails if perSecond is not
// positive.
func WithRate(perSecond float64) Option {
	return func(o *options) { o.rate = perSecond }
}

// New returns a source of count records, record i being fn(i) for
// 0 <= i < count. A negative count means unbounded: the source never
// returns io.EOF (in practice; it ends after index math.MaxInt64-1).
//
// fn must depend only on i, and it is called concurrently from the subtasks,
// so it must be safe for concurrent use. Use Mix to derive pseudo-random
// values from i.
func New[T any](count int64, fn func(i int64) T, opts ...Option) connector.Source[T] {
	return &source[T]{count: count, fn: fn, opts: buildOptions(opts)}
}

// Sequence returns a bounded source of the integers from, from+1, ..., to-1
// (none if to <= from; at most math.MaxInt64 of them).
func Sequence(from, to int64, opts ...Option) connector.Source[int64] {
	count := int64(0)
	if to > from {
		count = int64(min(uint64(to)-uint64(from), math.MaxInt64))
	}
	return &sequence{from: from, count: count, opts: buildOptions(opts)}
}

// Mix returns a pseudo-random 64-bit value that depends only on seed and i:
// the (i+1)-th output of the SplitMix64 generator started at seed. Different
// i give statistically independent values, so a generator function can draw
// per-record random values without shared state, for example
//
//	price := 100 + float64(generator.Mix(seed, uint64(i))%1000)/10
//
// and a record depends only on its index.
func Mix(seed, i uint64) uint64 {
	z := seed + (i+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func buildOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// cursor walks one subtask's indices: next, next+stride, ... while < end.
// It counts in uint64 so that stepping past end <= math.MaxInt64 cannot
// overflow.
type cursor struct {
	next, stride, end uint64
	lim               *limiter // nil if unthrottled
	// splits, when not nil, replace next and stride: the strides of a
	// rescaled position, read merged in index order (rescale.go).
	splits []split
}

func openCursor(info connector.SubtaskInfo, pos connector.Position, count int64, o options) (c cursor, err error) {
	if err := info.Validate(); err != nil {
		return cursor{}, err
	}
	if count < 0 {
		count = math.MaxInt64
	}
	c = cursor{next: uint64(info.Subtask), stride: uint64(info.Parallelism), end: uint64(count)}
	if isSplits(pos) {
		if c.splits, err = decodeSplits(pos); err != nil {
			return cursor{}, err
		}
	} else if len(pos) > 0 { // nil or empty: the beginning
		i, n := binary.Uvarint(pos)
		if n <= 0 || n != len(pos) {
			return cursor{}, fmt.Errorf("generator: corrupt position %x: want a uvarint index", []byte(pos))
		}
		if i%c.stride != c.next {
			return cursor{}, fmt.Errorf("generator: position index %d does not belong to subtask %d of %d (a position is only valid for the subtask and parallelism that took it)",
				i, info.Subtask, info.Parallelism)
		}
		c.next = i
	}
	if o.rate != 0 {
		if !(o.rate > 0) || math.IsInf(o.rate, 1) {
			return cursor{}, fmt.Errorf("generator: rate must be positive and finite, not %v", o.rate)
		}
		c.lim = newLimiter(o.rate / float64(info.Parallelism))
	}
	return c, nil
}

// take returns how many records, at most max, the next Read may yield;
// 0, io.EOF at the end.
func (c *cursor) take(ctx context.Context, max int) (int, error) {
	var n int
	if c.splits != nil {
		n = c.splitsLeft(max)
	} else if c.next < c.end {
		n = int(min(uint64(max), (c.end-1-c.next)/c.stride+1))
	}
	if n == 0 {
		return 0, io.EOF
	}
	if c.lim != nil && n > 0 {
		return c.lim.take(ctx, n)
	}
	return n, nil
}

func (c *cursor) position() connector.Position {
	if c.splits != nil {
		return c.splitsPosition()
	}
	return binary.AppendUvarint(nil, c.next)
}

type source[T any] struct {
	count int64
	fn    func(int64) T
	opts  options
}

func (s *source[T]) Open(_ context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[T], error) {
	if s.fn == nil {
		return nil, errors.New("generator: nil function")
	}
	c, err := openCursor(info, pos, s.count, s.opts)
	if err != nil {
		return nil, err
	}
	return &reader[T]{cursor: c, fn: s.fn}, nil
}

type reader[T any] struct {
	cursor
	fn func(int64) T
}

func (r *reader[T]) Read(ctx context.Context, buf []T) (int, error) {
	n, err := r.take(ctx, len(buf))
	if n == 0 {
		return 0, err
	}
	if r.splits != nil {
		for k := range buf[:n] {
			buf[k] = r.fn(int64(r.nextIndex()))
		}
		return n, nil
	}
	fn, first, stride := r.fn, int64(r.next), int64(r.stride)
	b := buf[:n]
	for k := range b {
		b[k] = fn(first + int64(k)*stride)
	}
	r.next += uint64(n) * r.stride
	return n, nil
}

func (r *reader[T]) Position() connector.Position { return r.position() }
func (r *reader[T]) Close() error                 { return nil }

type sequence struct {
	from, count int64
	opts        options
}

func (s *sequence) Open(_ context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[int64], error) {
	c, err := openCursor(info, pos, s.count, s.opts)
	if err != nil {
		return nil, err
	}
	return &seqReader{cursor: c, from: s.from}, nil
}

// seqReader is Sequence's reader: the same as reader with fn inlined.
type seqReader struct {
	cursor
	from int64
}

func (r *seqReader) Read(ctx context.Context, buf []int64) (int, error) {
	n, err := r.take(ctx, len(buf))
	if n == 0 {
		return 0, err
	}
	if r.splits != nil {
		for k := range buf[:n] {
			buf[k] = r.from + int64(r.nextIndex())
		}
		return n, nil
	}
	v, stride := r.from+int64(r.next), int64(r.stride)
	b := buf[:n]
	for k := range b {
		b[k] = v
		v += stride
	}
	r.next += uint64(n) * r.stride
	return n, nil
}

func (r *seqReader) Position() connector.Position { return r.position() }
func (r *seqReader) Close() error                 { return nil }

// Deterministic reports that a reader opened at a position returns the
// same records in the same order every time (connector.Deterministic).
func (s *source[T]) Deterministic() bool { return true }

// Deterministic reports that a reader opened at a position returns the
// same records in the same order every time (connector.Deterministic).
func (s *sequence) Deterministic() bool { return true }
