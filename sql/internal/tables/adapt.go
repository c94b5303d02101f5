package tables

import (
	"context"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/sql/row"
)

// This file adapts a connector of records of type T to one of rows: a
// source whose readers convert each batch of T into rows, a sink whose
// writers convert each batch of rows into T. The optional abilities of
// the underlying connector (connector.Deterministic, connector.Rescaler,
// connector.Committer, connector.Idempotent) pass through, and only those
// it has.

// mapSource returns a source of rows read from src and converted by conv,
// which fills dst[:n] from the records of src it keeps, in order, and
// returns n. A reader reads on until a batch keeps a row or src ends.
func mapSource[T any](src connector.Source[T], conv func(dst []row.Row, src []T) int) connector.Source[row.Row] {
	m := &rowSource[T]{src: src, conv: conv}
	if r, ok := src.(connector.Rescaler); ok {
		return &rescalingRowSource[T]{m, r}
	}
	return m
}

type rowSource[T any] struct {
	src  connector.Source[T]
	conv func(dst []row.Row, src []T) int
}

func (s *rowSource[T]) Open(ctx context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[row.Row], error) {
	r, err := s.src.Open(ctx, info, pos)
	if err != nil {
		return nil, err
	}
	return &rowReader[T]{r: r, conv: s.conv}, nil
}

// Deterministic passes on the underlying source's ability.
func (s *rowSource[T]) Deterministic() bool {
	d, ok := s.src.(connector.Deterministic)
	return ok && d.Deterministic()
}

type rescalingRowSource[T any] struct {
	*rowSource[T]
	connector.Rescaler
}

type rowReader[T any] struct {
	r    connector.Reader[T]
	conv func(dst []row.Row, src []T) int
	buf  []T
}

func (r *rowReader[T]) Read(ctx context.Context, buf []row.Row) (int, error) {
	if cap(r.buf) < len(buf) {
		r.buf = make([]T, len(buf))
	}
	src := r.buf[:len(buf)]
	for {
		n, err := r.r.Read(ctx, src)
		kept := r.conv(buf[:n], src[:n])
		if kept > 0 || n == 0 || err != nil {
			return kept, err
		}
	}
}

func (r *rowReader[T]) Position() connector.Position { return r.r.Position() }
func (r *rowReader[T]) Close() error                 { return r.r.Close() }

// mapSink returns a sink that converts each batch of rows and writes it
// to dst. Every writer gets its own conversion from newConv; it appends
// the Ts to write to dst (one per row, or fewer for rows it drops) and
// returns it, and the Ts may share memory that the next call reuses. An
// error fails the Write.
func mapSink[T any](dst connector.Sink[T], newConv func() func(dst []T, src []row.Row) ([]T, error)) connector.Sink[row.Row] {
	return &rowSink[T]{dst: dst, newConv: newConv}
}

type rowSink[T any] struct {
	dst     connector.Sink[T]
	newConv func() func(dst []T, src []row.Row) ([]T, error)
}

func (s *rowSink[T]) Open(ctx context.Context, info connector.SubtaskInfo) (connector.Writer[row.Row], error) {
	w, err := s.dst.Open(ctx, info)
	if err != nil {
		return nil, err
	}
	rw := &rowWriter[T]{w: w, conv: s.newConv()}
	if c, ok := w.(connector.Committer); ok {
		return &committingRowWriter[T]{rw, c}, nil
	}
	return rw, nil
}

// Idempotent passes on the underlying sink's ability.
func (s *rowSink[T]) Idempotent() bool {
	i, ok := s.dst.(connector.Idempotent)
	return ok && i.Idempotent()
}

type rowWriter[T any] struct {
	w    connector.Writer[T]
	conv func(dst []T, src []row.Row) ([]T, error)
	buf  []T
}

func (w *rowWriter[T]) Write(ctx context.Context, batch []row.Row) error {
	var err error
	if w.buf, err = w.conv(w.buf[:0], batch); err != nil {
		return err
	}
	return w.w.Write(ctx, w.buf)
}

func (w *rowWriter[T]) Flush(ctx context.Context) error { return w.w.Flush(ctx) }
func (w *rowWriter[T]) Close() error                    { return w.w.Close() }

type committingRowWriter[T any] struct {
	*rowWriter[T]
	connector.Committer
}
