package codec

import "reflect"

// Transparent reports whether values that c encodes may pass between the
// goroutines of one process as they are instead of encoded and decoded:
// c is a codec For returns (or one of the built-in codecs), Decode of
// Append(v) is always equal to v, field for field, and a copy of v shares
// no memory that anyone can change.
//
// That holds for booleans, integers, floats, strings (Go strings are
// immutable), time.Duration, and arrays and structs built only of them.
// It does not hold for slices, maps and pointers (the receiver would
// share the sender's memory), time.Time (decoding drops the monotonic
// reading and the location), types that encode themselves, fields
// tagged `codec:"-"` (decoding zeroes them), nor for any codec a user
// supplies, whose encoding may differ from the value on purpose.
//
// A type may also declare it by implementing Shareable.
//
// The engine passes records of such a type between subtasks of one
// process without encoding them.
func Transparent[T any](c Codec[T]) bool {
	switch any(c).(type) {
	case int64Codec, int32Codec, intCodec, uint64Codec, uint32Codec,
		float64Codec, float32Codec, boolCodec, stringCodec, durationCodec:
		return true
	case *structCodec[T], *valueCodec[T], *escapingCodec[T]:
		return transparentType(reflect.TypeFor[T]())
	}
	return false
}

// transparentType reports whether t is built only of kinds whose copy is
// the value its encoding decodes to (see Transparent).
func transparentType(t reflect.Type) bool {
	if t.Implements(shareableType) {
		return true
	}
	if isCustom(t) {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	case reflect.Array:
		return transparentType(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Name == "_" {
				continue // never read, and ignored by ==
			}
			if f.Tag.Get("codec") == "-" || !transparentType(f.Type) {
				return false
			}
		}
		return true
	}
	return false
}

// Shareable is implemented by a type whose values may pass between the
// goroutines of one process as they are, though it holds slices or
// pointers or encodes itself. By implementing it the type promises what
// Transparent checks for other types:
//
//   - decoding a value's encoding (by the codec For returns) gives a
//     value equal to it;
//   - no code changes a value in place once it was handed to the engine
//     (emitted by an operator or stored in state): code that needs other
//     contents builds a new value.
//
// A value changed in place after it was emitted would be seen changed by
// its receiver, and by a receiver that the engine replays it to after a
// failure.
//
// The engine counts values it keeps (output retained for upstream backup)
// by their size and the bytes of their strings; a Shareable type that
// holds slices should also have a method SizeInMemory() int returning the
// bytes a value holds beyond its own size, so that those bounds count
// what it holds.
type Shareable interface{ ShareableValue() }

var shareableType = reflect.TypeFor[Shareable]()
