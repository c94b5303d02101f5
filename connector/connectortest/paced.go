package connectortest

import (
	"context"
	"io"
	"time"

	"github.com/weir-stream/weir/connector"
)

// Timed is a record a Paced source emits once the clock is At after the
// source opened.
type Timed[T any] struct {
	At time.Duration
	V  T
}

// Paced returns a source, for one subtask, that emits each record once
// the clock reached its At, for tests that run on a fake clock
// (testing/synctest) and want records at given processing times. After
// it returned records its reader reports nothing once, without waiting,
// so that the source ships them before the clock moves on. It has no
// positions: a restore starts it over.
func Paced[T any](records []Timed[T]) connector.Source[T] { return paced[T]{records} }

type paced[T any] struct{ records []Timed[T] }

func (s paced[T]) Open(context.Context, connector.SubtaskInfo, connector.Position) (connector.Reader[T], error) {
	return &pacedReader[T]{records: s.records, start: time.Now()}, nil
}

type pacedReader[T any] struct {
	records []Timed[T]
	start   time.Time
	sent    bool // records returned and not yet shipped
}

func (r *pacedReader[T]) Read(ctx context.Context, buf []T) (int, error) {
	if len(r.records) == 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(buf) && n < len(r.records) && time.Since(r.start) >= r.records[n].At {
		buf[n] = r.records[n].V
		n++
	}
	r.records = r.records[n:]
	if n > 0 || r.sent {
		r.sent = n > 0
		return n, nil
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(r.records[0].At - time.Since(r.start)):
		return 0, nil
	}
}

func (r *pacedReader[T]) Position() connector.Position { return nil }
func (r *pacedReader[T]) Close() error                 { return nil }
