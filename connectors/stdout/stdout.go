// Package stdout provides sinks that print records as JSON lines, for
// debugging and examples.
//
// Each record becomes one line of JSON (encoding/json, without HTML
// escaping). A Write prints its whole batch with a single write under a lock
// shared by all subtasks of the sink (for JSON, by all sinks writing to
// os.Stdout), so lines never interleave and a batch's lines stay together;
// the order across subtasks is the order their Writes happen. Records are
// printed when Write returns; Flush has nothing left to do. The sinks give
// no guarantee across failures: a restarted job prints records again.
package stdout

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/weir-stream/weir/connector"
)

// stdoutMu serializes all writes of JSON sinks to os.Stdout.
var stdoutMu sync.Mutex

// JSON returns a sink that prints records as JSON lines to os.Stdout.
func JSON[T any]() connector.Sink[T] {
	return &sink[T]{mu: &stdoutMu, stdout: true}
}

// To returns a sink that writes records as JSON lines to w. Its subtasks
// serialize their writes to w with a lock of their own, so w itself need
// not be safe for concurrent use, but it must not be written to by others
// at the same time.
func To[T any](w io.Writer) connector.Sink[T] {
	return &sink[T]{mu: new(sync.Mutex), w: w}
}

type sink[T any] struct {
	mu     *sync.Mutex
	w      io.Writer
	stdout bool // write to os.Stdout as it is at the time of writing
}

func (s *sink[T]) Open(_ context.Context, info connector.SubtaskInfo) (connector.Writer[T], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	w := &writer[T]{sink: s}
	w.enc = json.NewEncoder(&w.buf)
	w.enc.SetEscapeHTML(false)
	return w, nil
}

type writer[T any] struct {
	sink *sink[T]
	buf  bytes.Buffer
	enc  *json.Encoder
}

func (w *writer[T]) Write(_ context.Context, batch []T) error {
	w.buf.Reset()
	for i := range batch {
		if err := w.enc.Encode(&batch[i]); err != nil {
			return fmt.Errorf("stdout: encoding record: %w", err)
		}
	}
	if w.buf.Len() == 0 {
		return nil
	}
	s := w.sink
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.w
	if s.stdout {
		out = os.Stdout
	}
	if _, err := out.Write(w.buf.Bytes()); err != nil {
		return fmt.Errorf("stdout: %w", err)
	}
	return nil
}

func (w *writer[T]) Flush(context.Context) error { return nil }
func (w *writer[T]) Close() error                { return nil }
