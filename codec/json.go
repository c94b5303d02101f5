package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
)

// JSON returns a Codec for T that uses encoding/json, for connectors that
// exchange JSON with the outside world. It is slower and larger than For's
// binary codec and should not be used between tasks or for state.
//
// Append appends v as one JSON document exactly as json.Marshal produces it,
// with no trailing newline. JSON cannot represent every value (NaN and
// infinite floats, channels, a MarshalJSON method that fails), and the
// Codec contract has no way to report an encoding failure, so Append panics
// with the json.Marshal error for such values.
//
// Decode reads exactly one JSON document from the start of src, skipping
// leading white space, and returns the offset just past the document's
// last byte; anything after it, such as a separating newline, is left for
// the caller. Several documents in a row are therefore decoded by repeated
// calls, provided that adjacent numbers, which would run together, are
// separated by white space. Decode first sets *v to the zero value, then
// decodes as json.Unmarshal would (unknown object keys are ignored). Errors,
// including empty or truncated input, syntax errors and JSON values that do
// not fit T, wrap both ErrCorrupt and the encoding/json error.
func JSON[T any]() Codec[T] { return jsonCodec[T]{} }

type jsonCodec[T any] struct{}

func (jsonCodec[T]) Append(dst []byte, v T) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Errorf("codec: JSON encoding %v: %w", reflect.TypeFor[T](), err))
	}
	return append(dst, b...)
}

func (jsonCodec[T]) Decode(src []byte, v *T) (int, error) {
	var zero T
	*v = zero
	d := json.NewDecoder(bytes.NewReader(src))
	if err := d.Decode(v); err != nil {
		detail := "invalid JSON"
		if errors.Is(err, io.EOF) {
			detail, err = "no JSON document", nil
		} else if errors.Is(err, io.ErrUnexpectedEOF) {
			detail = "truncated JSON document"
		}
		return 0, &corruptError{what: "JSON " + reflect.TypeFor[T]().String(), detail: detail, cause: err}
	}
	return int(d.InputOffset()), nil
}
