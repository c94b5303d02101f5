package weirtest

import (
	"context"
	"fmt"
	"sync"

	"github.com/weir-stream/weir/connector"
)

// Written is one record a Sink received, with where it came from.
type Written[T any] struct {
	Value   T
	Subtask int
	// Attempt is the job attempt that wrote the record (0: the first run).
	Attempt int
	// Barrier is the last checkpoint barrier the writer had seen when it
	// wrote the record in this attempt, or -1 for none.
	Barrier int64
}

// Sink is an in-memory sink for tests of fault tolerance. Its writers
// commit with checkpoints (connector.Committer), so with exactly-once only
// committed records become visible; with other guarantees the engine does
// not use the commit protocol and every record is visible when written.
// Every record written is also kept in a log with its attempt and epoch.
type Sink[T any] struct {
	plain     bool
	mu        sync.Mutex
	visible   []Written[T]
	log       []Written[T]
	pending   map[string][]Written[T] // pre-committed, by transaction
	committed map[string]bool
	open      map[string][]Written[T] // per sink subtask: written, not pre-committed
	grew      chan struct{}           // closed and replaced when visible grows
}

// NewSink returns an empty transactional sink.
func NewSink[T any]() *Sink[T] {
	return &Sink[T]{pending: map[string][]Written[T]{}, committed: map[string]bool{}, open: map[string][]Written[T]{}}
}

// Visible returns the records made visible, in order.
func (s *Sink[T]) Visible() []Written[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Written[T](nil), s.visible...)
}

// Grew returns a channel that is closed once more records than n are
// visible, or sooner, at the next commit that makes records visible:
// a caller that needs more than n waits in a loop.
func (s *Sink[T]) Grew(n int) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.visible) > n {
		c := make(chan struct{})
		close(c)
		return c
	}
	if s.grew == nil {
		s.grew = make(chan struct{})
	}
	return s.grew
}

// Values returns the visible records' values.
func (s *Sink[T]) Values() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]T, len(s.visible))
	for i, w := range s.visible {
		out[i] = w.Value
	}
	return out
}

// NewPlainSink returns an empty sink without two-phase commit: every record
// is visible as soon as it is written, as with most non-transactional
// systems. At-least-once tests use it to see the duplicates of a rollback.
func NewPlainSink[T any]() *Sink[T] {
	s := NewSink[T]()
	s.plain = true
	return s
}

// Open opens subtask info.Subtask's writer for attempt info.Attempt.
func (s *Sink[T]) Open(_ context.Context, info connector.SubtaskInfo) (connector.Writer[T], error) {
	w := &writer[T]{s: s, subtask: info.Subtask, attempt: info.Attempt, barrier: -1,
		key: fmt.Sprintf("%s#%d", info.Operator, info.Subtask)}
	if s.plain {
		return plainWriter[T]{w}, nil
	}
	return w, nil
}

// plainWriter hides the commit protocol of a writer.
type plainWriter[T any] struct{ w *writer[T] }

func (p plainWriter[T]) Write(ctx context.Context, b []T) error { return p.w.Write(ctx, b) }
func (p plainWriter[T]) Flush(ctx context.Context) error        { return p.w.Flush(ctx) }
func (p plainWriter[T]) Close() error                           { return p.w.Close() }

type writer[T any] struct {
	s                *Sink[T]
	subtask, attempt int
	barrier          int64
	committing       bool   // the engine uses the commit protocol
	key              string // the sink operator and subtask, when several sinks share the Sink
}

func (w *writer[T]) Write(_ context.Context, batch []T) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	for _, v := range batch {
		rec := Written[T]{Value: v, Subtask: w.subtask, Attempt: w.attempt, Barrier: w.barrier}
		w.s.log = append(w.s.log, rec)
		if w.committing {
			w.s.open[w.key] = append(w.s.open[w.key], rec)
		} else {
			w.s.visible = append(w.s.visible, rec)
		}
	}
	return nil
}

func (w *writer[T]) Flush(ctx context.Context) error {
	if id, ok := connector.CheckpointOf(ctx); ok {
		w.barrier = id
	}
	return nil
}

func (w *writer[T]) Close() error { return nil }

func txnName(key string, attempt int, id int64) string {
	return fmt.Sprintf("%s/%d/%d", key, attempt, id)
}

func (w *writer[T]) PreCommit(_ context.Context, id int64) ([]byte, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.barrier = id
	name := txnName(w.key, w.attempt, id)
	w.s.pending[name] = w.s.open[w.key]
	w.s.open[w.key] = nil
	return []byte(name), nil
}

func (w *writer[T]) Commit(_ context.Context, txn []byte) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.commit(string(txn))
}

// commit makes a transaction visible once; s.mu is held.
func (s *Sink[T]) commit(name string) error {
	if s.committed[name] {
		return nil
	}
	recs, ok := s.pending[name]
	if !ok {
		return fmt.Errorf("weirtest sink: commit of unknown transaction %q", name)
	}
	s.visible = append(s.visible, recs...)
	s.committed[name] = true
	if s.grew != nil && len(recs) > 0 {
		close(s.grew)
		s.grew = nil
	}
	delete(s.pending, name)
	return nil
}

func (w *writer[T]) Recover(_ context.Context, _ int64, commit [][]byte) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.committing = true
	for _, txn := range commit {
		if err := w.s.commit(string(txn)); err != nil {
			return err
		}
	}
	// Abort whatever this subtask left behind in earlier attempts.
	prefix := w.key + "/"
	for name := range w.s.pending {
		if len(name) > len(prefix) && name[:len(prefix)] == prefix {
			delete(w.s.pending, name)
		}
	}
	w.s.open[w.key] = nil
	return nil
}
