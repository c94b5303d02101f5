package format

import (
	"bytes"
	"encoding/json"
)

// JSON returns the JSON format for T (encoding/json): Encode writes one
// JSON document without HTML escaping and without a trailing newline;
// Decode accepts exactly one JSON document (surrounding white space
// allowed) and rejects trailing data. Unknown object fields are ignored,
// as encoding/json does.
func JSON[T any]() Format[T] { return jsonFormat[T]{typ: typeName[T]()} }

type jsonFormat[T any] struct{ typ string }

func (jsonFormat[T]) Name() string { return "json" }

func (f jsonFormat[T]) Encode(v T) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, &Error{Format: "json", Op: "encode", Type: f.typ, Err: err}
	}
	b := buf.Bytes()
	return b[:len(b)-1], nil // Encode appends a newline
}

func (f jsonFormat[T]) Decode(data []byte, v *T) error {
	var zero T
	*v = zero
	if err := json.Unmarshal(data, v); err != nil {
		*v = zero
		return &Error{Format: "json", Op: "decode", Type: f.typ, Err: err}
	}
	return nil
}
