package row

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"unsafe"

	"github.com/weir-stream/weir/internal/sql/types"
)

// ErrCorrupt is wrapped by DecodeBinary's errors. (The engine's codec
// wraps them again in its own ErrCorrupt.)
var ErrCorrupt = errors.New("corrupt row encoding")

// AppendBinary appends r's encoding: the op, the value count, then each
// value as its kind and either its string or its integer. It never
// fails; it implements the engine's codec.Marshaler.
func (r Row) AppendBinary(dst []byte) ([]byte, error) {
	dst = append(dst, byte(r.Op))
	dst = binary.AppendUvarint(dst, uint64(len(r.V)))
	for _, v := range r.V {
		dst = AppendValue(dst, v)
	}
	return dst, nil
}

// ValuesOffset returns where the values begin in AppendBinary's encoding
// of a row of n values: after the op and the value count.
func ValuesOffset(n int) int { return 1 + (bits.Len64(uint64(n)|1)+6)/7 }

// AppendValue appends the encoding of one value; equal values encode
// equally, so the bytes serve as a key.
func AppendValue(dst []byte, v Value) []byte {
	dst = append(dst, byte(v.K))
	switch v.K {
	case types.Null:
	case types.Varchar:
		dst = binary.AppendUvarint(dst, uint64(len(v.S)))
		dst = append(dst, v.S...)
	default:
		dst = binary.AppendVarint(dst, v.I)
	}
	return dst
}

// DecodeBinary decodes a row AppendBinary wrote, replacing r. Strings
// are copied out of src.
func (r *Row) DecodeBinary(src []byte) (int, error) {
	op, n, off, err := decodeHeader(src)
	if err != nil {
		return 0, err
	}
	vs := make([]Value, n)
	for i := range vs {
		m, err := DecodeValue(src[off:], &vs[i])
		if err != nil {
			return 0, err
		}
		off += m
	}
	r.Op, r.V = op, vs
	return off, nil
}

// decodeHeader decodes the op and value count of a row's encoding, and
// returns the offset of its first value.
func decodeHeader(src []byte) (op Op, n uint64, off int, err error) {
	if len(src) < 2 {
		return 0, 0, 0, fmt.Errorf("row: %w: short input", ErrCorrupt)
	}
	op = Op(src[0])
	if op > Delete {
		return 0, 0, 0, fmt.Errorf("row: %w: op %d", ErrCorrupt, op)
	}
	n, k := binary.Uvarint(src[1:])
	if k <= 0 || n > uint64(len(src)) {
		return 0, 0, 0, fmt.Errorf("row: %w: value count", ErrCorrupt)
	}
	return op, n, 1 + k, nil
}

// SkipBinary checks the row encoding (AppendBinary's) at the start of src
// and returns its length, decoding no value.
func SkipBinary(src []byte) (int, error) {
	_, n, off, err := decodeHeader(src)
	if err != nil {
		return 0, err
	}
	var v Value
	for range n {
		m, err := decodeValue(src[off:], &v, false)
		if err != nil {
			return 0, err
		}
		off += m
	}
	return off, nil
}

// AppendShared appends to dst the values of the row encoding enc (one
// that SkipBinary accepted), its strings sharing enc's bytes instead of
// copying them: enc must never change afterwards. It is for rows kept
// encoded in state and decoded each time they are read.
func AppendShared(dst []Value, enc []byte) ([]Value, error) {
	dst, _, err := AppendSharedPrefix(dst, enc)
	return dst, err
}

// AppendSharedPrefix is AppendShared of the row encoding at the start of
// enc, which may go on with other bytes; it also returns the encoding's
// length. It is for rows kept one after another.
func AppendSharedPrefix(dst []Value, enc []byte) ([]Value, int, error) {
	_, n, off, err := decodeHeader(enc)
	if err != nil {
		return dst, 0, err
	}
	for range n {
		dst = append(dst, Value{})
		m, err := decodeValue(enc[off:], &dst[len(dst)-1], false)
		if err != nil {
			return dst, 0, err
		}
		off += m
	}
	return dst, off, nil
}

// DecodeValue decodes one value AppendValue wrote into *v and returns
// the bytes it took.
func DecodeValue(src []byte, v *Value) (int, error) { return decodeValue(src, v, true) }

// decodeValue is DecodeValue; a string is copied out of src if clone,
// else it shares src's bytes.
func decodeValue(src []byte, v *Value, clone bool) (int, error) {
	if len(src) == 0 {
		return 0, fmt.Errorf("row: %w: short value", ErrCorrupt)
	}
	kind := types.Kind(src[0])
	switch {
	case kind == types.Null:
		*v = Value{}
		return 1, nil
	case kind == types.Varchar:
		n, k := binary.Uvarint(src[1:])
		if k <= 0 || n > uint64(len(src)-1-k) {
			return 0, fmt.Errorf("row: %w: string length", ErrCorrupt)
		}
		b := src[1+k : 1+k+int(n)]
		s := ""
		switch {
		case clone:
			s = strings.Clone(string(b))
		case n > 0:
			s = unsafe.String(&b[0], len(b))
		}
		*v = Value{K: kind, S: s}
		return 1 + k + int(n), nil
	case kind <= types.Interval:
		i, k := binary.Varint(src[1:])
		if k <= 0 {
			return 0, fmt.Errorf("row: %w: integer", ErrCorrupt)
		}
		*v = Value{K: kind, I: i}
		return 1 + k, nil
	}
	return 0, fmt.Errorf("row: %w: kind %d", ErrCorrupt, kind)
}

// Key returns the encoding of r's values at cols, appended to dst[:0]:
// rows equal at those columns have equal keys. The planner keys rows by
// string(Key(...)).
func Key(dst []byte, r Row, cols []int) []byte {
	dst = dst[:0]
	for _, c := range cols {
		dst = AppendValue(dst, r.V[c])
	}
	return dst
}
