package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// JSON returns the JSON format for T (encoding/json): Encode writes one
// JSON document without HTML escaping and without a trailing newline;
// Decode accepts exactly one JSON document (surrounding white space
// allowed) and rejects trailing data. Unknown object fields are ignored,
// as encoding/json does.
//
// Decode also rejects what encoding/json would turn silently into another
// value: a document that is null (encoding/json leaves T's zero value),
// and bytes that are not valid UTF-8 (encoding/json replaces them with
// U+FFFD, so distinct inputs would decode to one string). A T that must
// have certain fields says so in its UnmarshalJSON method, whose error
// Decode returns as the cause.
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
	if err := checkJSON(data); err != nil {
		return &Error{Format: "json", Op: "decode", Type: f.typ, Err: err}
	}
	if err := unmarshal(data, v); err != nil {
		*v = zero
		return &Error{Format: "json", Op: "decode", Type: f.typ, Err: err}
	}
	return nil
}

// ErrNull is the cause of a decode error for a JSON document that is null.
var ErrNull = errors.New("the document is null")

// checkJSON rejects a document encoding/json would decode by changing it:
// one with bytes that are not UTF-8, and null.
func checkJSON(data []byte) error {
	if err := CheckUTF8(data); err != nil {
		return err
	}
	if string(bytes.TrimSpace(data)) == "null" {
		return ErrNull
	}
	return nil
}

// CheckUTF8 returns nil if data is valid UTF-8, and otherwise an error
// that gives the offset of the first invalid byte and the bytes there.
func CheckUTF8(data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	i := 0
	for i < len(data) {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		i += n
	}
	return fmt.Errorf("invalid UTF-8 at byte %d (%q)", i, data[i:min(len(data), i+4)])
}

// unmarshal is json.Unmarshal, but calls the UnmarshalJSON method of a T
// that has one directly once the document is known to be valid JSON:
// json.Unmarshal would first scan it and then hand the method the same
// bytes, which costs a record type with required fields about half its
// decoding time.
func unmarshal[T any](data []byte, v *T) error {
	u, ok := any(v).(json.Unmarshaler)
	if !ok || !json.Valid(data) {
		return json.Unmarshal(data, v) // and its error for invalid JSON
	}
	return u.UnmarshalJSON(bytes.TrimSpace(data))
}
