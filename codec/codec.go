// Package codec turns records into bytes and back.
//
// Every record that crosses a task boundary, and every value that enters
// keyed or operator state, is encoded by a Codec. The engine picks a codec
// for a type with For; a user plugs in their own by implementing Codec and
// passing it to the pipeline API (weir.WithCodec).
//
// # Binary format
//
// The built-in binary format is compact and stable: unsigned integers are
// uvarints, signed integers zig-zag varints, floats their IEEE-754 bits in
// little-endian order, strings and byte slices a uvarint length followed by
// the bytes, time.Time its Unix nanoseconds as a varint, and a struct its
// exported fields in declaration order. The format carries no type
// information; both ends must use the same codec for the same type.
//
// In more detail:
//
//   - Varints are minimal: a decoder rejects an over-long varint, so every
//     value has exactly one encoding.
//   - A bool is one byte, 0 or 1.
//   - A time.Time outside the range of int64 Unix nanoseconds (years before
//     1678 or after 2262, including the zero Time) is encoded as the varint
//     of math.MinInt64 followed by its Unix seconds as a varint and its
//     nanoseconds within the second as a uvarint. Decoded times are in UTC
//     and have no monotonic clock reading.
//   - A time.Duration is a zig-zag varint of its nanoseconds.
//   - A slice is a uvarint element count followed by the elements; an array
//     is its elements (the length is in the type). A byte array is its raw
//     bytes.
//   - A map is a uvarint entry count followed by key/value pairs sorted by
//     the bytes of the encoded key, so equal maps encode identically.
//   - A pointer is a presence byte (0 for nil, 1 otherwise) followed, when
//     present, by the value pointed to.
//   - A type that implements Marshaler and Unmarshaler encodes itself.
//
// Nil and empty slices, and nil and empty maps, encode identically and decode
// as nil. Because every value has exactly one encoding, a successful Decode
// followed by Append reproduces the bytes consumed (unless a type that encodes
// itself breaks this rule).
//
// # Schemas
//
// The codecs For builds, and the built-in ones, are Evolvable: each
// describes its encoding with a Schema, and reads values written under an
// earlier schema of its type through the codec its Reader returns (fields
// matched by name, added fields set to their zero value or declared
// default, removed fields skipped, integers and floats widened). weir
// records the schemas of the types it keeps in state with every
// checkpoint, so that a new version of a job restores its old state.
//
// JSON provides an encoding/json based Codec for connectors.
package codec

import "errors"

// Codec encodes and decodes values of type T.
//
// Append appends the encoding of v to dst and returns the extended slice; it
// never fails for a value of T. (A codec whose format cannot represent some
// values of T, such as JSON's for NaN, must document that and panic.) Decode reads one value from the start of src
// into *v and returns the number of bytes consumed. Decode returns an error
// wrapping ErrCorrupt when src does not start with a complete, valid encoding;
// it never panics on bad input. After an error *v is unspecified and the
// returned count is 0. A value decoded from Append's output is equal to the
// value encoded (for floats: bit-identical).
//
// Decode does not retain src: strings and byte slices in the decoded value
// are copies.
//
// Codecs are safe for concurrent use and allocate only what the decoded value
// itself needs (for example the bytes of a string).
type Codec[T any] interface {
	Append(dst []byte, v T) []byte
	Decode(src []byte, v *T) (int, error)
}

// ErrCorrupt is wrapped by every decoding error caused by malformed input.
var ErrCorrupt = errors.New("codec: corrupt input")
