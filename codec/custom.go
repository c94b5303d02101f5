package codec

import (
	"fmt"
	"reflect"
	"unsafe"
)

// Marshaler is implemented by types that encode themselves. For uses a
// type's own encoding when *T implements Unmarshaler and T or *T implements
// Marshaler; T may then contain anything, unexported fields included.
//
// AppendBinary appends the encoding of the receiver to dst and returns the
// extended slice. Its signature matches encoding.BinaryAppender, but a type
// that implements only Marshaler (as many standard library types do) is
// encoded structurally; implementing Unmarshaler as well opts in.
//
// The Codec contract has no way to report an encoding failure, so a codec
// that calls AppendBinary panics if it returns an error.
//
// An encoding must be self-delimiting: DecodeBinary must be able to tell
// where it ends when more bytes follow. When the type is an element of a
// slice or a map key or value, the encoding must be at least one byte long.
type Marshaler interface {
	AppendBinary(dst []byte) ([]byte, error)
}

// Unmarshaler is implemented by pointers to types that decode themselves.
//
// DecodeBinary decodes one value from the start of src into the receiver,
// replacing its whole contents, and returns the number of bytes consumed. It
// must not retain src and must not panic on malformed input; it should
// return an error wrapping ErrCorrupt instead (errors that do not are
// wrapped by the codec).
type Unmarshaler interface {
	DecodeBinary(src []byte) (int, error)
}

func appendCustom(dst []byte, pl *plan, p unsafe.Pointer) []byte {
	m := reflect.NewAt(pl.typ, p).Interface().(Marshaler)
	out, err := m.AppendBinary(dst)
	if err != nil {
		panic(fmt.Errorf("codec: %v.AppendBinary: %w", pl.typ, err))
	}
	return out
}

func decodeCustom(src []byte, pl *plan, p unsafe.Pointer) (int, error) {
	u := reflect.NewAt(pl.typ, p).Interface().(Unmarshaler)
	n, err := u.DecodeBinary(src)
	if err != nil {
		return 0, &corruptError{what: pl.typ.String(), detail: "DecodeBinary failed", cause: err}
	}
	if n < 0 || n > len(src) {
		return 0, corrupt(pl.typ.String(), fmt.Sprintf("DecodeBinary returned length %d for %d bytes of input", n, len(src)))
	}
	return n, nil
}
