package codec

import "unsafe"

// BoundedLen is the size of the buffer AppendBounded encodes into.
const BoundedLen = 64

// Bounded reports whether c is a codec For returns for a type whose
// encoding never takes more than BoundedLen bytes: booleans, integers,
// floats, byte arrays, and arrays and structs built only of them (a
// struct of a few integer columns, as a composite key). AppendBounded
// encodes values of such a codec into a buffer on the caller's stack.
func Bounded[T any](c Codec[T]) bool {
	switch c := c.(type) {
	case *structCodec[T]:
		return c.bounded
	case *valueCodec[T]:
		return c.bounded
	}
	return false
}

// AppendBounded returns the encoding of v by c. When Bounded(c) it is
// encoded into buf, which does not move to the heap for it: the caller
// may hash or copy a small encoding without allocating. Otherwise it is
// c.Append(nil, v).
func AppendBounded[T any](c Codec[T], buf *[BoundedLen]byte, v T) []byte {
	// buf and v are hidden from escape analysis: a bounded plan's encoders
	// read v and append at most len(buf) bytes to dst, keeping nothing.
	dst := unsafe.Slice((*byte)(noescape(unsafe.Pointer(buf))), BoundedLen)[:0]
	switch c := c.(type) {
	case *structCodec[T]:
		if c.bounded {
			return appendStruct(dst, c.pl, noescape(unsafe.Pointer(&v)))
		}
	case *valueCodec[T]:
		if c.bounded {
			return appendOp(dst, c.pl, noescape(unsafe.Pointer(&v)))
		}
	}
	return c.Append(nil, v)
}

// bounded reports whether pl's encoding takes at most BoundedLen bytes.
func bounded(pl *plan) bool {
	n, ok := maxLen(pl)
	return ok && n <= BoundedLen
}

// maxLen returns the most bytes pl's encoding takes, if that is bounded.
func maxLen(pl *plan) (int, bool) {
	switch pl.op {
	case opBool, opInt8, opUint8:
		return 2, true
	case opInt16, opUint16:
		return 3, true
	case opInt32, opUint32, opFloat32:
		return 5, true
	case opInt64, opUint64, opFloat64:
		return 10, true
	case opByteArray:
		return pl.n, true
	case opArray:
		n, ok := maxLen(pl.elem)
		return n * pl.n, ok
	case opStruct:
		sum := 0
		for i := range pl.fields {
			n, ok := maxLen(pl.fields[i].pl)
			if !ok {
				return 0, false
			}
			sum += n
		}
		return sum, true
	}
	return 0, false
}
