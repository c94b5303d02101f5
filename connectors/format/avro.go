package format

import (
	"errors"
	"fmt"
	"io"

	"github.com/hamba/avro/v2"
)

// Avro returns the Avro binary format for T with the given schema (Avro
// schema JSON), encoded and decoded by github.com/hamba/avro/v2: struct
// fields map to record fields by their `avro:"name"` tag. Values are bare
// Avro binary, without a container header or a schema-registry prefix; the
// writer and the reader use the same schema. Decode fails on truncated or
// invalid input and on bytes after a complete value.
//
// Avro checks the schema at once: it must parse, and T's zero value must
// encode with it and decode back, which catches a record field T lacks or a
// field of the wrong type. The errors wrap ErrOption.
func Avro[T any](schema string) (Format[T], error) {
	if schema == "" {
		return nil, optionErr[T]("avro", errors.New("an Avro schema is required"))
	}
	s, err := avro.Parse(schema)
	if err != nil {
		return nil, optionErr[T]("avro", fmt.Errorf("schema does not parse: %w", err))
	}
	f := &avroFormat[T]{schema: s, typ: typeName[T]()}
	var zero T
	b, err := avro.Marshal(s, zero)
	if err == nil {
		var back T
		err = f.Decode(b, &back)
	}
	if err != nil {
		return nil, optionErr[T]("avro", fmt.Errorf("type does not fit the schema (checked with its zero value): %w", err))
	}
	return f, nil
}

type avroFormat[T any] struct {
	schema avro.Schema
	typ    string
}

func (*avroFormat[T]) Name() string { return "avro" }

func (f *avroFormat[T]) Encode(v T) ([]byte, error) {
	b, err := avro.Marshal(f.schema, v)
	if err != nil {
		return nil, &Error{Format: "avro", Op: "encode", Type: f.typ, Err: err}
	}
	return b, nil
}

func (f *avroFormat[T]) Decode(data []byte, v *T) error {
	var zero T
	*v = zero
	// avro.Unmarshal treats running out of input as success, so read
	// with a Reader and tell truncation and trailing bytes apart.
	r := avro.NewReader(nil, 0).Reset(data)
	r.ReadVal(f.schema, v)
	err := r.Error
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		err = fmt.Errorf("input of %d bytes ends inside the value", len(data))
	case err == nil:
		if r.Peek(); r.Error == nil {
			err = errors.New("bytes left after the value")
		}
	}
	if err != nil {
		*v = zero
		return &Error{Format: "avro", Op: "decode", Type: f.typ, Err: err}
	}
	return nil
}
