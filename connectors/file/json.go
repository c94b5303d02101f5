package file

import (
	"bytes"
	"context"
	"sync/atomic"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/format"
)

// JSONOptions configures JSONLines.
type JSONOptions struct {
	// OnMalformed says what to do with a line that does not decode:
	// connector.Fail (the default) makes Read return a
	// *connector.MalformedError; connector.Skip drops the line.
	OnMalformed connector.MalformedPolicy
	// Malformed, if not nil, is called with every line skipped under
	// connector.Skip. It is called from the subtasks' goroutines, possibly
	// concurrently.
	Malformed func(connector.MalformedError)
	// Skipped, if not nil, is incremented for every line skipped under
	// connector.Skip, by all subtasks.
	Skipped *atomic.Int64
}

// JSONLines returns a source of the JSON documents in the given files, one
// per line, each decoded into a T by format.JSON: encoding/json, except
// that a line that is null or not valid UTF-8 is malformed, and so is one
// T's UnmarshalJSON rejects (a missing required field, say). Blank lines
// are skipped. A malformed line is handled as opts.OnMalformed says; the
// *connector.MalformedError locates it as "path:line (byte offset)", with
// path as given, line counted from 1 and offset counted from 0 in its file.
//
// Records are decoded into a zeroed T, so nothing carries over from the
// previous contents of the read buffer.
func JSONLines[T any](opts JSONOptions, paths ...string) connector.Source[T] {
	return &jsonSource[T]{opts: opts, paths: append([]string(nil), paths...)}
}

type jsonSource[T any] struct {
	opts  JSONOptions
	paths []string
}

func (s *jsonSource[T]) Open(_ context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[T], error) {
	lr, err := openLines(s.paths, info, pos)
	if err != nil {
		return nil, err
	}
	return &jsonReader[T]{lr: lr, opts: &s.opts, format: format.JSON[T]()}, nil
}

type jsonReader[T any] struct {
	lr     *lineReader
	opts   *JSONOptions
	format format.Format[T]
	failed *connector.MalformedError // under Fail: the line we stopped at
}

func (r *jsonReader[T]) Read(_ context.Context, buf []T) (int, error) {
	if r.failed != nil {
		return 0, r.failed
	}
	k := 0
	for k < len(buf) {
		line, err := r.lr.next()
		if err != nil {
			if k > 0 { // return what we have; the error is sticky
				break
			}
			return 0, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := r.format.Decode(line, &buf[k]); err != nil {
			merr := &connector.MalformedError{Where: r.lr.where(), Err: err}
			if r.opts.OnMalformed == connector.Skip {
				if r.opts.Skipped != nil {
					r.opts.Skipped.Add(1)
				}
				if r.opts.Malformed != nil {
					r.opts.Malformed(*merr)
				}
				continue
			}
			r.failed = merr
			if k > 0 {
				break
			}
			return 0, merr
		}
		k++
	}
	return k, nil
}

// Position returns the position of the next line, or, after a malformed
// line failed the reader, of that line.
func (r *jsonReader[T]) Position() connector.Position {
	if r.failed != nil {
		return r.lr.positionOfLast()
	}
	return r.lr.position()
}

func (r *jsonReader[T]) Close() error { return r.lr.close() }

// Deterministic reports that a reader opened at a position returns the
// same records in the same order every time (connector.Deterministic).
func (s *jsonSource[T]) Deterministic() bool { return true }
