package file

import (
	"bytes"
	"context"
	"sync/atomic"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/format"
)

// Options configures the sources that parse lines, JSONLines and
// TextLines.
type Options struct {
	// OnMalformed says what to do with a line that does not parse:
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

// JSONOptions configures JSONLines; it is Options.
type JSONOptions = Options

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
func JSONLines[T any](opts Options, paths ...string) connector.Source[T] {
	f := format.JSON[T]()
	return &parsedSource[T]{opts: opts, paths: append([]string(nil), paths...), parse: f.Decode, skipBlank: true}
}

// ParsedLines returns a source of the non-blank lines of the given files,
// each parsed into a T by parse, for formats that JSONLines's decoding of
// a Go type does not fit (a schema known only at run time, say). parse
// is called with a line (without its line ending) and a zeroed *T; it
// must not retain the line. An error makes the line malformed, handled
// as opts.OnMalformed says and located as JSONLines locates lines.
func ParsedLines[T any](opts Options, parse func(line []byte, v *T) error, paths ...string) connector.Source[T] {
	return &parsedSource[T]{opts: opts, paths: append([]string(nil), paths...), parse: func(line []byte, v *T) error {
		var zero T
		*v = zero
		return parse(line, v)
	}, skipBlank: true}
}

// TextLines returns a source of the lines of the given files, as Lines
// does, that must be UTF-8 text: a line with bytes that are not valid
// UTF-8 is malformed and handled as opts.OnMalformed says, located as
// JSONLines locates lines. Lines keeps such bytes as they are, which is
// right for binary-safe processing but not for output that must be text:
// a JSON encoder replaces each invalid byte with U+FFFD, so distinct lines
// would become one string.
func TextLines(opts Options, paths ...string) connector.Source[string] {
	return &parsedSource[string]{opts: opts, paths: append([]string(nil), paths...), parse: parseText}
}

func parseText(line []byte, v *string) error {
	if err := format.CheckUTF8(line); err != nil {
		return err
	}
	*v = string(line)
	return nil
}

// parsedSource reads lines and parses each into a T.
type parsedSource[T any] struct {
	opts  Options
	paths []string
	// parse parses a line into *v; an error makes the line malformed. It
	// must not retain line.
	parse     func(line []byte, v *T) error
	skipBlank bool
}

func (s *parsedSource[T]) Open(_ context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[T], error) {
	lr, err := openLines(s.paths, info, pos)
	if err != nil {
		return nil, err
	}
	return &parsedReader[T]{lr: lr, src: s}, nil
}

type parsedReader[T any] struct {
	lr     *lineReader
	src    *parsedSource[T]
	failed *connector.MalformedError // under Fail: the line we stopped at
}

func (r *parsedReader[T]) Read(_ context.Context, buf []T) (int, error) {
	if r.failed != nil {
		return 0, r.failed
	}
	opts := &r.src.opts
	k := 0
	for k < len(buf) {
		line, err := r.lr.next()
		if err != nil {
			if k > 0 { // return what we have; the error is sticky
				break
			}
			return 0, err
		}
		if r.src.skipBlank && len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := r.src.parse(line, &buf[k]); err != nil {
			merr := &connector.MalformedError{Where: r.lr.where(), Err: err}
			if opts.OnMalformed == connector.Skip {
				if opts.Skipped != nil {
					opts.Skipped.Add(1)
				}
				if opts.Malformed != nil {
					opts.Malformed(*merr)
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
func (r *parsedReader[T]) Position() connector.Position {
	if r.failed != nil {
		return r.lr.positionOfLast()
	}
	return r.lr.position()
}

func (r *parsedReader[T]) Close() error { return r.lr.close() }

// Deterministic reports that a reader opened at a position returns the
// same records in the same order every time (connector.Deterministic).
func (s *parsedSource[T]) Deterministic() bool { return true }
