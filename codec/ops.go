package codec

import (
	"encoding/binary"
	"reflect"
	"strconv"
	"time"
	"unsafe"
)

// appendOp appends the encoding of the value of type pl.typ at p. It
// dispatches on pl.op with a switch rather than through function values, so
// leaf fields of structs cost one predictable jump and no indirect call.
func appendOp(dst []byte, pl *plan, p unsafe.Pointer) []byte {
	switch pl.op {
	case opBool:
		return appendBool(dst, *(*bool)(p))
	case opInt8:
		return appendVarint(dst, int64(*(*int8)(p)))
	case opInt16:
		return appendVarint(dst, int64(*(*int16)(p)))
	case opInt32:
		return appendVarint(dst, int64(*(*int32)(p)))
	case opInt64:
		return appendVarint(dst, *(*int64)(p))
	case opUint8:
		return appendUvarint(dst, uint64(*(*uint8)(p)))
	case opUint16:
		return appendUvarint(dst, uint64(*(*uint16)(p)))
	case opUint32:
		return appendUvarint(dst, uint64(*(*uint32)(p)))
	case opUint64:
		return appendUvarint(dst, *(*uint64)(p))
	case opFloat32:
		return binary.LittleEndian.AppendUint32(dst, *(*uint32)(p))
	case opFloat64:
		return binary.LittleEndian.AppendUint64(dst, *(*uint64)(p))
	case opString:
		return appendString(dst, *(*string)(p))
	case opBytes:
		b := *(*[]byte)(p)
		dst = appendUvarint(dst, uint64(len(b)))
		return append(dst, b...)
	case opByteArray:
		return append(dst, unsafe.Slice((*byte)(p), pl.n)...)
	case opTime:
		return appendTime(dst, *(*time.Time)(p))
	case opStruct:
		return appendStruct(dst, pl, p)
	case opSlice:
		h := (*sliceHeader)(p)
		dst = appendUvarint(dst, uint64(h.len))
		return appendElems(dst, pl.elem, h.data, h.len)
	case opArray:
		return appendElems(dst, pl.elem, p, pl.n)
	case opPtr:
		q := *(*unsafe.Pointer)(p)
		if q == nil {
			return append(dst, 0)
		}
		return appendOp(append(dst, 1), pl.elem, q)
	case opMap:
		return appendMap(dst, pl, p)
	case opCustom:
		return appendCustom(dst, pl, p)
	}
	panic("codec: internal error: bad op " + strconv.Itoa(int(pl.op)))
}

func appendStruct(dst []byte, pl *plan, p unsafe.Pointer) []byte {
	for i := range pl.fields {
		f := &pl.fields[i]
		dst = appendOp(dst, f.pl, unsafe.Add(p, f.off))
	}
	return dst
}

func appendElems(dst []byte, elem *plan, p unsafe.Pointer, n int) []byte {
	if elem.min == 0 {
		return dst // zero-size elements encode as nothing
	}
	for i := range n {
		dst = appendOp(dst, elem, unsafe.Add(p, uintptr(i)*elem.size))
	}
	return dst
}

// decodeOp decodes a value of type pl.typ from the start of src into p and
// returns the number of bytes consumed. The decoded value replaces the
// whole of *p; nothing of the old value survives or is reused.
func decodeOp(src []byte, pl *plan, p unsafe.Pointer) (n int, err error) {
	switch pl.op {
	case opBool:
		n, err = decBool(src, (*bool)(p))
	case opInt8:
		n, err = decInt8(src, (*int8)(p))
	case opInt16:
		n, err = decInt16(src, (*int16)(p))
	case opInt32:
		n, err = decInt32(src, (*int32)(p))
	case opInt64:
		n, err = decInt64(src, (*int64)(p))
	case opUint8:
		n, err = decUint8(src, (*uint8)(p))
	case opUint16:
		n, err = decUint16(src, (*uint16)(p))
	case opUint32:
		n, err = decUint32(src, (*uint32)(p))
	case opUint64:
		n, err = decUint64(src, (*uint64)(p))
	case opFloat32:
		n, err = decFloat32(src, (*uint32)(p))
	case opFloat64:
		n, err = decFloat64(src, (*uint64)(p))
	case opString:
		n, err = decString(src, (*string)(p))
	case opBytes:
		n, err = decBytes(src, (*[]byte)(p))
	case opByteArray:
		if len(src) < pl.n {
			return 0, corrupt(pl.typ.String(), "truncated input")
		}
		copy(unsafe.Slice((*byte)(p), pl.n), src)
		return pl.n, nil
	case opTime:
		n, err = decTime(src, (*time.Time)(p))
	case opStruct:
		return decodeStruct(src, pl, p)
	case opSlice:
		return decodeSlice(src, pl, p)
	case opArray:
		return decodeElems(src, pl.elem, p, pl.n)
	case opPtr:
		return decodePtr(src, pl, p)
	case opMap:
		return decodeMap(src, pl, p)
	case opCustom:
		return decodeCustom(src, pl, p)
	default:
		panic("codec: internal error: bad op " + strconv.Itoa(int(pl.op)))
	}
	if err != nil {
		return 0, retype(err, pl.typ)
	}
	return n, nil
}

// retype makes a leaf decoding error name the Go type being decoded, such
// as a named type or int, rather than the representation ("int64").
func retype(err error, t reflect.Type) error {
	if e, ok := err.(*corruptError); ok {
		e.what = t.String()
	}
	return err
}

func decodeStruct(src []byte, pl *plan, p unsafe.Pointer) (int, error) {
	off := 0
	for i := range pl.fields {
		f := &pl.fields[i]
		n, err := decodeOp(src[off:], f.pl, unsafe.Add(p, f.off))
		if err != nil {
			return 0, withPath(err, f.name)
		}
		off += n
	}
	for i := range pl.skipped {
		f := &pl.skipped[i]
		// SetZero clears pointers with write barriers, which a raw memclr
		// would not.
		reflect.NewAt(f.typ, unsafe.Add(p, f.off)).Elem().SetZero()
	}
	return off, nil
}

// decodeElems decodes n consecutive elements into the array at p.
func decodeElems(src []byte, elem *plan, p unsafe.Pointer, n int) (int, error) {
	if elem.min == 0 && elem.size == 0 {
		return 0, nil // nothing to decode or to zero
	}
	off := 0
	for i := range n {
		m, err := decodeOp(src[off:], elem, unsafe.Add(p, uintptr(i)*elem.size))
		if err != nil {
			return 0, withPath(err, "["+strconv.Itoa(i)+"]")
		}
		off += m
	}
	return off, nil
}

// readCount reads the element count of a slice or map whose elements encode
// in at least min bytes each, and checks that the input can hold them.
func readCount(src []byte, pl *plan, min int) (int, int, error) {
	c, n := readUvarint(src)
	if n <= 0 {
		return 0, 0, varintError(pl.typ.String(), n)
	}
	rest := uint64(len(src) - n)
	limit := uint64(maxInt)
	switch {
	case min > 0:
		limit = rest / uint64(min)
	case pl.elem.size > 0:
		// Elements that encode as nothing yet occupy memory (structs whose
		// fields are all skipped): bound the allocation.
		limit = maxEmptyElems
	}
	if c > limit {
		return 0, 0, corrupt(pl.typ.String(), "length "+strconv.FormatUint(c, 10)+" exceeds input")
	}
	return int(c), n, nil
}

const (
	maxInt = int(^uint(0) >> 1)

	// maxEmptyElems is the most elements Decode accepts for a slice or map
	// whose elements encode as nothing but are not zero-size.
	maxEmptyElems = 1 << 16
)

func decodeSlice(src []byte, pl *plan, p unsafe.Pointer) (int, error) {
	count, n, err := readCount(src, pl, pl.elem.min)
	if err != nil {
		return 0, err
	}
	// Never reuse the old backing array: the caller may still hold it.
	*(*sliceHeader)(p) = sliceHeader{}
	if count == 0 {
		return n, nil
	}
	s := reflect.NewAt(pl.typ, p).Elem()
	s.Grow(count)
	s.SetLen(count)
	if pl.elem.min == 0 {
		return n, nil // the elements encode as nothing; fresh memory is zero
	}
	m, err := decodeElems(src[n:], pl.elem, s.UnsafePointer(), count)
	if err != nil {
		return 0, err
	}
	return n + m, nil
}

func decodePtr(src []byte, pl *plan, p unsafe.Pointer) (int, error) {
	if len(src) == 0 {
		return 0, corrupt(pl.typ.String(), "truncated input")
	}
	switch src[0] {
	case 0:
		*(*unsafe.Pointer)(p) = nil
		return 1, nil
	case 1:
		q := reflect.New(pl.elem.typ).UnsafePointer()
		n, err := decodeOp(src[1:], pl.elem, q)
		if err != nil {
			return 0, err
		}
		*(*unsafe.Pointer)(p) = q
		return 1 + n, nil
	}
	return 0, corrupt(pl.typ.String(), "presence byte is neither 0 nor 1")
}
