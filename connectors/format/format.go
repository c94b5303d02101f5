// Package format turns a connector's records into bytes and back: the
// value formats of message-oriented connectors (Kafka, NATS, ...).
//
// A Format[T] is created once per job, when the job is built, so that a bad
// option (an unknown format name, an Avro schema that does not parse or does
// not fit T) fails the job at start with a clear error instead of at the
// first record. After that it is used from many subtasks at once: every
// implementation here is safe for concurrent use.
//
// Decode errors are *Error values wrapping ErrDecode; a source turns them
// into a connector.MalformedError that adds where the bytes came from
// (topic, partition, offset), and applies its malformed-record policy.
package format

import (
	"errors"
	"fmt"
	"reflect"
)

// Format encodes values of type T to bytes and decodes bytes to T.
//
// Encode returns the encoding of v in a new slice the caller may keep.
// Decode decodes data into *v; it first resets *v to T's zero value, so
// nothing carries over from what *v held before, and it does not retain
// data. Errors are *Error values and say which format, which Go type and
// what was wrong. Implementations are safe for concurrent use.
type Format[T any] interface {
	Encode(v T) ([]byte, error)
	Decode(data []byte, v *T) error
	// Name is the format's name as accepted by New: "json", "avro".
	Name() string
}

// ErrDecode is wrapped by every error Decode returns: the bytes are not a
// valid encoding of T in the format.
var ErrDecode = errors.New("cannot decode")

// ErrEncode is wrapped by every error Encode returns.
var ErrEncode = errors.New("cannot encode")

// ErrOption is wrapped by the errors of New, JSON and Avro for a bad
// option: an unknown format, a missing or invalid schema, a schema that
// does not fit T.
var ErrOption = errors.New("invalid format option")

// Error is the error of an Encode, Decode or a constructor.
type Error struct {
	Format string // "json", "avro"
	Op     string // "encode", "decode" or "option"
	Type   string // the Go type, e.g. "nexmark.Bid"
	Err    error  // what was wrong
}

func (e *Error) Error() string {
	switch e.Op {
	case "decode":
		return fmt.Sprintf("%s: cannot decode %s: %v", e.Format, e.Type, e.Err)
	case "encode":
		return fmt.Sprintf("%s: cannot encode %s: %v", e.Format, e.Type, e.Err)
	}
	return fmt.Sprintf("%s format for %s: %v", e.Format, e.Type, e.Err)
}

// Unwrap returns ErrDecode, ErrEncode or ErrOption (by Op) and the cause.
func (e *Error) Unwrap() []error {
	switch e.Op {
	case "decode":
		return []error{ErrDecode, e.Err}
	case "encode":
		return []error{ErrEncode, e.Err}
	}
	return []error{ErrOption, e.Err}
}

// Names lists the formats New accepts.
var Names = []string{"json", "avro"}

// New returns the format called name for T: "json" (schema must be empty)
// or "avro" (schema is the Avro schema as JSON text). It is how a
// connector turns its options into a Format; its errors wrap ErrOption.
func New[T any](name, schema string) (Format[T], error) {
	switch name {
	case "json":
		if schema != "" {
			return nil, optionErr[T](name, errors.New("the json format takes no schema"))
		}
		return JSON[T](), nil
	case "avro":
		return Avro[T](schema)
	}
	return nil, optionErr[T](name, fmt.Errorf("unknown format %q; known formats: %q", name, Names))
}

func typeName[T any]() string {
	t := reflect.TypeFor[T]()
	if t.Name() == "" {
		return t.String()
	}
	if t.PkgPath() == "" {
		return t.Name()
	}
	return t.String()
}

func optionErr[T any](format string, err error) error {
	return &Error{Format: format, Op: "option", Type: typeName[T](), Err: err}
}
