package weir_test

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sliceSource is a bounded source over a slice, split strided.
// With one set, Read returns one record at a time, so that a pipeline with
// a tiny watermark interval emits a watermark after every record.
type sliceSource[T any] struct {
	items []T
	one   bool
	// pauses, if set, makes each reader stop that many times, evenly
	// spread over its items, until the source's next snapshot took its
	// position: a run then takes at least that many checkpoints while it
	// reads, however fast it reads.
	pauses int
}

func (s sliceSource[T]) Open(_ context.Context, info connector.SubtaskInfo, _ connector.Position) (connector.Reader[T], error) {
	r := &sliceReader[T]{items: s.items, next: info.Subtask, step: info.Parallelism, one: s.one}
	if s.pauses > 0 {
		r.every = max(len(s.items)/info.Parallelism/(s.pauses+1), 1)
		r.left = s.pauses
	}
	return r, nil
}

type sliceReader[T any] struct {
	items      []T
	next, step int
	one        bool
	every      int  // items between pauses (0: none)
	since      int  // items read since the last pause
	left       int  // pauses still to make
	paused     bool // waiting for a snapshot
}

func (r *sliceReader[T]) Read(_ context.Context, buf []T) (int, error) {
	if r.paused {
		return 0, nil
	}
	if r.one {
		buf = buf[:1]
	}
	n := 0
	for n < len(buf) && r.next < len(r.items) {
		buf[n] = r.items[r.next]
		n++
		r.next += r.step
	}
	if n == 0 {
		return 0, errEOF
	}
	if r.since += n; r.every > 0 && r.left > 0 && r.since >= r.every {
		r.paused, r.left = true, r.left-1
	}
	return n, nil
}

// Position ends a pause: a snapshot took it.
func (r *sliceReader[T]) Position() connector.Position {
	if r.paused {
		r.paused, r.since = false, 0
	}
	return nil
}

func (r *sliceReader[T]) Close() error { return nil }

// sink collects records in memory.
type sink[T any] struct {
	mu   sync.Mutex
	recs []T
}

func (s *sink[T]) Open(context.Context, connector.SubtaskInfo) (connector.Writer[T], error) {
	return s, nil
}

func (s *sink[T]) Write(_ context.Context, b []T) error {
	s.mu.Lock()
	s.recs = append(s.recs, b...)
	s.mu.Unlock()
	return nil
}

func (s *sink[T]) Flush(context.Context) error { return nil }
func (s *sink[T]) Close() error                { return nil }

func (s *sink[T]) sorted(less func(a, b T) bool) []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]T(nil), s.recs...)
	sort.Slice(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out
}

func run(t *testing.T, p *weir.Pipeline) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
