package codec

import (
	"reflect"
	"sync"
	"time"
	"unsafe"
)

// forCache maps a reflect.Type to the *forEntry For built for it.
var forCache sync.Map

type forEntry struct {
	codec any // a Codec[T]
	err   error
}

// For returns the binary codec for T, built by reflection on first use and
// cached per type, so later calls are cheap and return the same codec.
//
// For the types with a built-in codec (int64, int32, int, uint64, uint32,
// float64, float32, bool, string, []byte, time.Time, time.Duration) For
// returns that codec. Otherwise T may be built from:
//
//   - any integer kind, float32 and float64, bool and string, including
//     named types such as type ID int64;
//   - time.Time and time.Duration;
//   - structs: their exported fields in declaration order. A field tagged
//     `codec:"-"` is skipped (and zeroed by Decode); blank (_) fields are
//     ignored; an embedded struct of unexported type counts as exported;
//     any other unexported field is an error. A field tagged
//     `codec:"default=VALUE"` (a bool, an integer in Go syntax, a float,
//     a string or a time.Duration as time.ParseDuration reads it) takes
//     VALUE when read from an earlier schema without it (see Evolvable);
//     a VALUE that does not parse as the field's type is an error;
//   - slices, arrays, maps and pointers of supported types (recursive
//     types are fine; cyclic values are not and overflow the stack);
//   - types T where *T implements Unmarshaler and T or *T Marshaler,
//     which encode themselves.
//
// Chan, func, interface, complex and unsafe.Pointer types are not
// supported. For them, and for unexported struct fields, For returns an
// *UnsupportedTypeError naming the type and the field path where it was
// found, for example
//
//	codec: no codec for field Order.Meta.Done of type chan int
//
// The returned codec implements Evolvable.
//
// The returned codec works on raw memory through per-type tables built
// once, with no reflection for structs, slices, arrays and pointers. Append
// allocates nothing (beyond growing dst) except for maps, whose entries are
// sorted in a scratch buffer, and for types holding a self-encoding type
// inline, which move v to the heap. Decode allocates only what the decoded
// value holds: string bytes, slices, maps and pointed-to values.
//
// Decoding is strict: it rejects over-long varints, out-of-range integers,
// bool and presence bytes other than 0 and 1, lengths larger than the
// remaining input, and maps with unsorted or duplicate keys. It never
// reuses memory of the old *v (slices, maps and pointers are replaced) and
// never retains src.
func For[T any]() (Codec[T], error) {
	t := reflect.TypeFor[T]()
	if e, ok := forCache.Load(t); ok {
		return entryCodec[T](e.(*forEntry))
	}
	c, err := newFor[T](t)
	e, _ := forCache.LoadOrStore(t, &forEntry{codec: c, err: err})
	return entryCodec[T](e.(*forEntry))
}

func entryCodec[T any](e *forEntry) (Codec[T], error) {
	if e.err != nil {
		return nil, e.err
	}
	return e.codec.(Codec[T]), nil
}

// MustFor is like For but panics if T has no codec. It suits package-level
// variables and types known to be supported.
func MustFor[T any]() Codec[T] {
	c, err := For[T]()
	if err != nil {
		panic(err)
	}
	return c
}

// newFor builds the codec For returns for T, whose reflect.Type is t.
func newFor[T any](t reflect.Type) (Codec[T], error) {
	var c any
	switch any((*T)(nil)).(type) {
	case *int64:
		c = Int64()
	case *int32:
		c = Int32()
	case *int:
		c = Int()
	case *uint64:
		c = Uint64()
	case *uint32:
		c = Uint32()
	case *float64:
		c = Float64()
	case *float32:
		c = Float32()
	case *bool:
		c = Bool()
	case *string:
		c = String()
	case *[]byte:
		c = Bytes()
	case *time.Time:
		c = Time()
	case *time.Duration:
		c = Duration()
	}
	if c != nil {
		return c.(Codec[T]), nil
	}
	pl, err := planFor(t)
	if err != nil {
		return nil, err
	}
	// Decoding errors inside a named struct or container type start their
	// field path with its name ("Trade.Legs[2].Price").
	root := ""
	switch pl.op {
	case opStruct, opSlice, opArray, opMap, opPtr:
		root = rootName(t)
	}
	switch {
	case pl.inlineCustom:
		return &escapingCodec[T]{pl: pl, root: root}, nil
	case pl.op == opStruct:
		return &structCodec[T]{pl: pl, root: root, bounded: bounded(pl)}, nil
	default:
		return &valueCodec[T]{pl: pl, root: root, bounded: bounded(pl)}, nil
	}
}

// structCodec is the codec For returns for a struct type without inline
// self-encoding fields. Append hands its encoders a pointer to its own
// copy of v hidden from escape analysis (noescape), so v stays on the
// stack. That is safe because the built-in encoders never retain the
// pointer: they read through it and return, and the reflection used for
// maps first copies the map pointer out of the value.
type structCodec[T any] struct {
	pl      *plan
	root    string // prefix of field paths in decoding errors
	bounded bool   // see Bounded
}

func (c *structCodec[T]) Append(dst []byte, v T) []byte {
	return appendStruct(dst, c.pl, noescape(unsafe.Pointer(&v)))
}

func (c *structCodec[T]) Decode(src []byte, v *T) (int, error) {
	n, err := decodeStruct(src, c.pl, unsafe.Pointer(v))
	if err != nil {
		return 0, withPath(err, c.root)
	}
	return n, nil
}

// valueCodec is structCodec for types other than structs.
type valueCodec[T any] struct {
	pl      *plan
	root    string // prefix of field paths in decoding errors
	bounded bool   // see Bounded
}

func (c *valueCodec[T]) Append(dst []byte, v T) []byte {
	return appendOp(dst, c.pl, noescape(unsafe.Pointer(&v)))
}

func (c *valueCodec[T]) Decode(src []byte, v *T) (int, error) {
	n, err := decodeOp(src, c.pl, unsafe.Pointer(v))
	if err != nil {
		return 0, withPath(err, c.root)
	}
	return n, nil
}

// escapingCodec is the codec for types that contain, inline, a type that
// encodes itself with a pointer receiver. The user's AppendBinary receives
// a pointer into v and may keep it, so v must not be hidden from escape analysis and moves to the
// heap on each Append.
type escapingCodec[T any] struct {
	pl   *plan
	root string // prefix of field paths in decoding errors
}

func (c *escapingCodec[T]) Append(dst []byte, v T) []byte {
	return appendOp(dst, c.pl, unsafe.Pointer(&v))
}

func (c *escapingCodec[T]) Decode(src []byte, v *T) (int, error) {
	n, err := decodeOp(src, c.pl, unsafe.Pointer(v))
	if err != nil {
		return 0, withPath(err, c.root)
	}
	return n, nil
}

func (c *structCodec[T]) Schema() Schema                      { return schemaOf(c.pl) }
func (c *structCodec[T]) Reader(w Schema) (Codec[T], error)   { return readerOf[T](c, w) }
func (c *valueCodec[T]) Schema() Schema                       { return schemaOf(c.pl) }
func (c *valueCodec[T]) Reader(w Schema) (Codec[T], error)    { return readerOf[T](c, w) }
func (c *escapingCodec[T]) Schema() Schema                    { return schemaOf(c.pl) }
func (c *escapingCodec[T]) Reader(w Schema) (Codec[T], error) { return readerOf[T](c, w) }
