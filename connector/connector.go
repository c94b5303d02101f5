// Package connector is weir's public plugin API for sources and sinks.
//
// A source reads records from an external system into a pipeline; a sink
// writes a pipeline's records out. Both are split across the parallel
// subtasks of their operator: subtask i of n opens its own Reader or Writer.
//
// The contracts below are what the engine relies on for fault tolerance:
// a Reader's Position lets the engine rewind a source exactly after a
// failure, and a Writer's optional abilities (see Committer) let a sink take
// part in checkpoints. Every connector passes the conformance suite in
// package connectortest.
package connector

import (
	"context"
	"errors"
)

// SubtaskInfo says which parallel instance of a source or sink is opened.
type SubtaskInfo struct {
	// Operator is the user-visible name of the source or sink operator.
	Operator string
	// Subtask is this instance's index, 0 <= Subtask < Parallelism.
	Subtask int
	// Parallelism is the number of parallel instances.
	Parallelism int
	// Attempt counts the job's restarts: 0 in its first run, n after the
	// n-th failure.
	Attempt int
}

// Position is an opaque, serializable point in a source's input. A nil
// Position means the beginning of the input.
type Position []byte

// Source creates the readers of a source operator.
//
// Open is called once per subtask, from the subtask's own goroutine, with
// the position to start from: nil on a fresh start, or a value returned
// earlier by Position of the same subtask's Reader when the engine restores
// from a checkpoint. Open must split the input deterministically by
// SubtaskInfo, so that reopening subtask i of n at a position yields the same
// records as before.
type Source[T any] interface {
	Open(ctx context.Context, info SubtaskInfo, pos Position) (Reader[T], error)
}

// Reader reads one subtask's share of a source.
//
// Read fills buf with up to len(buf) records and returns how many it wrote.
// It returns io.EOF (with n == 0) once a bounded input is exhausted; after
// that the engine calls only Position and Close. An unbounded reader with no
// data available may return 0, nil; it should then block no longer than
// about 10 ms so that the engine can inject barriers and watermarks. Any other
// error fails the subtask.
//
// Position returns the position just after the last record returned by Read.
// Reopening the source at that position resumes with the next record: no
// record is skipped and none is repeated. Before the first Read it returns
// a position equivalent to the one the reader was opened at, and after
// io.EOF one at which a reopened reader returns io.EOF at once. A bounded
// reader that has returned io.EOF returns it again if Read is called anyway.
//
// Read, Position and Close are called from one goroutine, never concurrently.
type Reader[T any] interface {
	Read(ctx context.Context, buf []T) (int, error)
	Position() Position
	Close() error
}

// Sink creates the writers of a sink operator. Open is called once per
// subtask from the subtask's goroutine.
type Sink[T any] interface {
	Open(ctx context.Context, info SubtaskInfo) (Writer[T], error)
}

// Writer writes one subtask's share of a sink's records.
//
// Write is handed batches of records in the order the subtask received them;
// the writer must not retain the batch slice after Write returns. Flush makes
// everything written so far durable or visible as far as the writer's
// guarantee promises; the engine calls it before it acknowledges a checkpoint
// and at the end of bounded input. Close releases resources; it is called
// once, after the last Write or Flush, also when the job fails.
//
// Write, Flush and Close are called from one goroutine, never concurrently.
type Writer[T any] interface {
	Write(ctx context.Context, batch []T) error
	Flush(ctx context.Context) error
	Close() error
}

// ErrMalformed is wrapped by errors a reader returns for input it cannot
// parse. See MalformedError. The same input fails the same way again, so
// the engine does not restart a job for it: the job fails at once.
var ErrMalformed = errors.New("malformed record")

// ErrConfig is wrapped by errors that no restart can cure because they come
// from the connector's configuration or from what it names, not from a
// passing fault: an output directory that is a file, an input file that
// does not exist, committed output removed under the job. The engine fails
// the job at once on such an error instead of restarting it into the same
// error. Wrap an error with ConfigError.
var ErrConfig = errors.New("configuration error")

// ConfigError returns an error with err's message that wraps both err and
// ErrConfig.
func ConfigError(err error) error { return configError{err} }

type configError struct{ err error }

func (e configError) Error() string   { return e.err.Error() }
func (e configError) Unwrap() []error { return []error{ErrConfig, e.err} }

// MalformedError describes one record a reader could not parse. Readers that
// can skip a bad record and continue return it from Read when their policy
// is to fail, so the message says what and where.
type MalformedError struct {
	// Where locates the record, for example "events.jsonl:17 (byte 2048)".
	Where string
	// Err is the parse error.
	Err error
}

func (e *MalformedError) Error() string {
	return "malformed record at " + e.Where + ": " + e.Err.Error()
}

// Unwrap returns both ErrMalformed and the parse error.
func (e *MalformedError) Unwrap() []error { return []error{ErrMalformed, e.Err} }

// MalformedPolicy says what a reader does with a record it cannot parse.
type MalformedPolicy int

const (
	// Fail stops the job with a MalformedError. It is the default.
	Fail MalformedPolicy = iota
	// Skip drops the record, counts it and reports it through the reader's
	// OnMalformed callback, if any.
	Skip
)

// ParseMalformedPolicy parses "fail" or "skip".
func ParseMalformedPolicy(s string) (MalformedPolicy, error) {
	switch s {
	case "fail", "":
		return Fail, nil
	case "skip":
		return Skip, nil
	}
	return Fail, errors.New(`malformed-record policy must be "fail" or "skip", not "` + s + `"`)
}

func (p MalformedPolicy) String() string {
	if p == Skip {
		return "skip"
	}
	return "fail"
}
