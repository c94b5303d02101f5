package codec

import (
	"encoding/binary"
	"math"
	"strconv"
	"time"
)

// The built-in codecs below are stateless, allocation-free (except for the
// bytes of decoded strings and byte slices) and safe for concurrent use. For
// returns these same codecs for the corresponding types.

// Int64 returns the codec for int64: a zig-zag varint.
func Int64() Codec[int64] { return int64Codec{} }

// Int32 returns the codec for int32: a zig-zag varint. Decoding rejects
// values outside the int32 range.
func Int32() Codec[int32] { return int32Codec{} }

// Int returns the codec for int: a zig-zag varint, the same encoding as
// Int64. On 32-bit platforms decoding rejects values outside the int range.
func Int() Codec[int] { return intCodec{} }

// Uint64 returns the codec for uint64: a uvarint.
func Uint64() Codec[uint64] { return uint64Codec{} }

// Uint32 returns the codec for uint32: a uvarint. Decoding rejects values
// outside the uint32 range.
func Uint32() Codec[uint32] { return uint32Codec{} }

// Float64 returns the codec for float64: its IEEE-754 bits as 8
// little-endian bytes. Decoding is bit-exact, NaN payloads included.
func Float64() Codec[float64] { return float64Codec{} }

// Float32 returns the codec for float32: its IEEE-754 bits as 4
// little-endian bytes. Decoding is bit-exact, NaN payloads included.
func Float32() Codec[float32] { return float32Codec{} }

// Bool returns the codec for bool: one byte, 0 or 1. Decoding rejects any
// other byte.
func Bool() Codec[bool] { return boolCodec{} }

// String returns the codec for string: a uvarint length and the bytes. The
// bytes need not be valid UTF-8.
func String() Codec[string] { return stringCodec{} }

// Bytes returns the codec for []byte: a uvarint length and the bytes. Nil
// and empty slices encode identically; decoding yields nil for length 0 and
// otherwise a fresh copy that does not alias the input.
func Bytes() Codec[[]byte] { return bytesCodec{} }

// Time returns the codec for time.Time: its Unix nanoseconds as a zig-zag
// varint, with an escape for times outside that range (see the package
// documentation). Decoded times are in UTC without a monotonic clock
// reading, so they are equal to the encoded time as reported by Time.Equal
// (and ==, for UTC times without a monotonic reading). The zero Time
// decodes as the zero Time.
func Time() Codec[time.Time] { return timeCodec{} }

// Duration returns the codec for time.Duration: a zig-zag varint of its
// nanoseconds.
func Duration() Codec[time.Duration] { return durationCodec{} }

type int64Codec struct{}

func (int64Codec) Append(dst []byte, v int64) []byte        { return appendVarint(dst, v) }
func (int64Codec) Decode(src []byte, v *int64) (int, error) { return decInt64(src, v) }

type int32Codec struct{}

func (int32Codec) Append(dst []byte, v int32) []byte        { return appendVarint(dst, int64(v)) }
func (int32Codec) Decode(src []byte, v *int32) (int, error) { return decInt32(src, v) }

type intCodec struct{}

func (intCodec) Append(dst []byte, v int) []byte { return appendVarint(dst, int64(v)) }
func (intCodec) Decode(src []byte, v *int) (int, error) {
	x, n := readVarint(src)
	if n <= 0 {
		return 0, varintError("int", n)
	}
	if strconv.IntSize == 32 && x != int64(int32(x)) {
		return 0, corrupt("int", "value out of range")
	}
	*v = int(x)
	return n, nil
}

type uint64Codec struct{}

func (uint64Codec) Append(dst []byte, v uint64) []byte        { return appendUvarint(dst, v) }
func (uint64Codec) Decode(src []byte, v *uint64) (int, error) { return decUint64(src, v) }

type uint32Codec struct{}

func (uint32Codec) Append(dst []byte, v uint32) []byte        { return appendUvarint(dst, uint64(v)) }
func (uint32Codec) Decode(src []byte, v *uint32) (int, error) { return decUint32(src, v) }

type float64Codec struct{}

func (float64Codec) Append(dst []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
}

func (float64Codec) Decode(src []byte, v *float64) (int, error) {
	var bits uint64
	n, err := decFloat64(src, &bits)
	if err != nil {
		return 0, err
	}
	*v = math.Float64frombits(bits)
	return n, nil
}

type float32Codec struct{}

func (float32Codec) Append(dst []byte, v float32) []byte {
	return binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
}

func (float32Codec) Decode(src []byte, v *float32) (int, error) {
	var bits uint32
	n, err := decFloat32(src, &bits)
	if err != nil {
		return 0, err
	}
	*v = math.Float32frombits(bits)
	return n, nil
}

type boolCodec struct{}

func (boolCodec) Append(dst []byte, v bool) []byte        { return appendBool(dst, v) }
func (boolCodec) Decode(src []byte, v *bool) (int, error) { return decBool(src, v) }

type stringCodec struct{}

func (stringCodec) Append(dst []byte, v string) []byte        { return appendString(dst, v) }
func (stringCodec) Decode(src []byte, v *string) (int, error) { return decString(src, v) }

type bytesCodec struct{}

func (bytesCodec) Append(dst []byte, v []byte) []byte {
	dst = appendUvarint(dst, uint64(len(v)))
	return append(dst, v...)
}
func (bytesCodec) Decode(src []byte, v *[]byte) (int, error) { return decBytes(src, v) }

type timeCodec struct{}

func (timeCodec) Append(dst []byte, v time.Time) []byte        { return appendTime(dst, v) }
func (timeCodec) Decode(src []byte, v *time.Time) (int, error) { return decTime(src, v) }

type durationCodec struct{}

func (durationCodec) Append(dst []byte, v time.Duration) []byte {
	return appendVarint(dst, int64(v))
}

func (durationCodec) Decode(src []byte, v *time.Duration) (int, error) {
	x, n := readVarint(src)
	if n <= 0 {
		return 0, varintError("time.Duration", n)
	}
	*v = time.Duration(x)
	return n, nil
}

// The built-in codecs are Evolvable: they encode as For's plans for their
// types do.

func (c int64Codec) Schema() Schema                            { return schemaFor[int64]() }
func (c int64Codec) Reader(w Schema) (Codec[int64], error)     { return readerOf[int64](c, w) }
func (c int32Codec) Schema() Schema                            { return schemaFor[int32]() }
func (c int32Codec) Reader(w Schema) (Codec[int32], error)     { return readerOf[int32](c, w) }
func (c intCodec) Schema() Schema                              { return schemaFor[int]() }
func (c intCodec) Reader(w Schema) (Codec[int], error)         { return readerOf[int](c, w) }
func (c uint64Codec) Schema() Schema                           { return schemaFor[uint64]() }
func (c uint64Codec) Reader(w Schema) (Codec[uint64], error)   { return readerOf[uint64](c, w) }
func (c uint32Codec) Schema() Schema                           { return schemaFor[uint32]() }
func (c uint32Codec) Reader(w Schema) (Codec[uint32], error)   { return readerOf[uint32](c, w) }
func (c float64Codec) Schema() Schema                          { return schemaFor[float64]() }
func (c float64Codec) Reader(w Schema) (Codec[float64], error) { return readerOf[float64](c, w) }
func (c float32Codec) Schema() Schema                          { return schemaFor[float32]() }
func (c float32Codec) Reader(w Schema) (Codec[float32], error) { return readerOf[float32](c, w) }
func (c boolCodec) Schema() Schema                             { return schemaFor[bool]() }
func (c boolCodec) Reader(w Schema) (Codec[bool], error)       { return readerOf[bool](c, w) }
func (c stringCodec) Schema() Schema                           { return schemaFor[string]() }
func (c stringCodec) Reader(w Schema) (Codec[string], error)   { return readerOf[string](c, w) }
func (c bytesCodec) Schema() Schema                            { return schemaFor[[]byte]() }
func (c bytesCodec) Reader(w Schema) (Codec[[]byte], error)    { return readerOf[[]byte](c, w) }
func (c timeCodec) Schema() Schema                             { return schemaFor[time.Time]() }
func (c timeCodec) Reader(w Schema) (Codec[time.Time], error)  { return readerOf[time.Time](c, w) }
func (c durationCodec) Schema() Schema                         { return schemaFor[time.Duration]() }
func (c durationCodec) Reader(w Schema) (Codec[time.Duration], error) {
	return readerOf[time.Duration](c, w)
}
