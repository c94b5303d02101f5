// Package collection provides an in-memory source and sink, for tests,
// examples and small jobs.
//
// Of is a bounded source over a fixed list of records. Its subtasks split
// the list by striding: subtask s of n yields the records at indices s, s+n,
// s+2n, ... in that order. A Position is the index of the next record the
// subtask would yield, encoded as a uvarint, so reopening at it resumes
// exactly there; it is valid only for the same subtask and parallelism.
//
// Sink collects everything its writers are given in memory. Records are
// visible to Records and BySubtask as soon as Write returns (Flush has
// nothing to do), so the sink shows every record written, even ones a failed
// job wrote after its last checkpoint.
package collection

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/weir-stream/weir/connector"
)

// Of returns a bounded source of a copy of items.
func Of[T any](items ...T) connector.Source[T] {
	return &source[T]{items: slices.Clone(items)}
}

type source[T any] struct{ items []T }

func (s *source[T]) Open(_ context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[T], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	r := &reader[T]{items: s.items, next: info.Subtask, stride: info.Parallelism}
	if len(pos) > 0 { // nil or empty: the beginning
		i, n := binary.Uvarint(pos)
		if n <= 0 || n != len(pos) {
			return nil, fmt.Errorf("collection: corrupt position %x: want a uvarint index", []byte(pos))
		}
		if i%uint64(r.stride) != uint64(r.next) || i > uint64(len(s.items)+r.stride) {
			return nil, fmt.Errorf("collection: position index %d does not belong to subtask %d of %d of a collection of %d records",
				i, info.Subtask, info.Parallelism, len(s.items))
		}
		r.next = int(i)
	}
	return r, nil
}

type reader[T any] struct {
	items        []T
	next, stride int
}

func (r *reader[T]) Read(_ context.Context, buf []T) (int, error) {
	if r.next >= len(r.items) {
		return 0, io.EOF
	}
	k := 0
	for ; k < len(buf) && r.next < len(r.items); k++ {
		buf[k] = r.items[r.next]
		r.next += r.stride
	}
	return k, nil
}

func (r *reader[T]) Position() connector.Position {
	return binary.AppendUvarint(nil, uint64(r.next))
}

func (r *reader[T]) Close() error { return nil }

// Sink is an in-memory sink, safe for concurrent use by its subtasks and by
// readers of its contents. The zero value is ready to use.
type Sink[T any] struct {
	mu   sync.Mutex
	subs [][]T
}

// NewSink returns an empty sink.
func NewSink[T any]() *Sink[T] { return new(Sink[T]) }

// Open returns the writer of a subtask. Reopening a subtask (after a
// restart) appends to what it wrote before.
func (s *Sink[T]) Open(_ context.Context, info connector.SubtaskInfo) (connector.Writer[T], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grow(info.Parallelism)
	return &writer[T]{sink: s, subtask: info.Subtask}, nil
}

// grow makes room for n subtasks; s.mu is held.
func (s *Sink[T]) grow(n int) {
	for len(s.subs) < n {
		s.subs = append(s.subs, nil)
	}
}

// Records returns a copy of everything written: each subtask's records in
// the order written, subtask 0 first.
func (s *Sink[T]) Records() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []T
	for _, seq := range s.subs {
		out = append(out, seq...)
	}
	return out
}

// BySubtask returns a copy of the records written by each subtask, indexed
// by subtask. It has an entry for every subtask opened, even if it wrote
// nothing.
func (s *Sink[T]) BySubtask() [][]T {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]T, len(s.subs))
	for i, seq := range s.subs {
		out[i] = slices.Clone(seq)
	}
	return out
}

// Reset forgets everything written so far. Writers that are still open
// keep working.
func (s *Sink[T]) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs = nil
}

type writer[T any] struct {
	sink    *Sink[T]
	subtask int
}

func (w *writer[T]) Write(_ context.Context, batch []T) error {
	w.sink.mu.Lock()
	defer w.sink.mu.Unlock()
	w.sink.grow(w.subtask + 1)
	w.sink.subs[w.subtask] = append(w.sink.subs[w.subtask], batch...)
	return nil
}

func (w *writer[T]) Flush(context.Context) error { return nil }
func (w *writer[T]) Close() error                { return nil }

// Deterministic reports that a reader opened at a position returns the
// same records in the same order every time (connector.Deterministic).
func (s *source[T]) Deterministic() bool { return true }
