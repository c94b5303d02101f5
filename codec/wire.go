package codec

import (
	"encoding/binary"
	"math"
	"time"
)

// This file holds the primitive encoders and decoders shared by the built-in
// codecs and the reflection-built ones. Decoders take a typed pointer, return
// the number of bytes consumed, and never read past the end of src.

// appendUvarint appends x as a minimal uvarint (7 bits a byte, low bits first,
// high bit set on every byte but the last).
func appendUvarint(dst []byte, x uint64) []byte {
	for x >= 0x80 {
		dst = append(dst, byte(x)|0x80)
		x >>= 7
	}
	return append(dst, byte(x))
}

// appendVarint appends x as the uvarint of its zig-zag encoding, so values of
// small magnitude take few bytes whatever their sign.
func appendVarint(dst []byte, x int64) []byte {
	return appendUvarint(dst, uint64(x<<1)^uint64(x>>63))
}

// readUvarint reads a minimal uvarint from the start of b. It returns the
// value and the number of bytes read, or 0 and one of varintTruncated,
// varintOverflow or varintNonCanonical.
func readUvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return readUvarintSlow(b)
}

func readUvarintSlow(b []byte) (uint64, int) {
	var x uint64
	var s uint
	for i := 0; i < len(b); i++ {
		c := b[i]
		if i == binary.MaxVarintLen64-1 {
			// The tenth byte holds bit 63 only and must end the varint.
			switch {
			case c > 1:
				return 0, varintOverflow
			case c == 0:
				return 0, varintNonCanonical
			}
			return x | 1<<63, i + 1
		}
		if c < 0x80 {
			if c == 0 && i > 0 {
				return 0, varintNonCanonical
			}
			return x | uint64(c)<<s, i + 1
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
	return 0, varintTruncated
}

// readVarint reads a zig-zag varint; see readUvarint for the results.
func readVarint(b []byte) (int64, int) {
	ux, n := readUvarint(b)
	return int64(ux>>1) ^ -int64(ux&1), n
}

func decInt64(src []byte, p *int64) (int, error) {
	x, n := readVarint(src)
	if n <= 0 {
		return 0, varintError("int64", n)
	}
	*p = x
	return n, nil
}

func decInt32(src []byte, p *int32) (int, error) {
	x, n := readVarint(src)
	if n <= 0 {
		return 0, varintError("int32", n)
	}
	if x != int64(int32(x)) {
		return 0, corrupt("int32", "value out of range")
	}
	*p = int32(x)
	return n, nil
}

func decInt16(src []byte, p *int16) (int, error) {
	x, n := readVarint(src)
	if n <= 0 {
		return 0, varintError("int16", n)
	}
	if x != int64(int16(x)) {
		return 0, corrupt("int16", "value out of range")
	}
	*p = int16(x)
	return n, nil
}

func decInt8(src []byte, p *int8) (int, error) {
	x, n := readVarint(src)
	if n <= 0 {
		return 0, varintError("int8", n)
	}
	if x != int64(int8(x)) {
		return 0, corrupt("int8", "value out of range")
	}
	*p = int8(x)
	return n, nil
}

func decUint64(src []byte, p *uint64) (int, error) {
	x, n := readUvarint(src)
	if n <= 0 {
		return 0, varintError("uint64", n)
	}
	*p = x
	return n, nil
}

func decUint32(src []byte, p *uint32) (int, error) {
	x, n := readUvarint(src)
	if n <= 0 {
		return 0, varintError("uint32", n)
	}
	if x > math.MaxUint32 {
		return 0, corrupt("uint32", "value out of range")
	}
	*p = uint32(x)
	return n, nil
}

func decUint16(src []byte, p *uint16) (int, error) {
	x, n := readUvarint(src)
	if n <= 0 {
		return 0, varintError("uint16", n)
	}
	if x > math.MaxUint16 {
		return 0, corrupt("uint16", "value out of range")
	}
	*p = uint16(x)
	return n, nil
}

func decUint8(src []byte, p *uint8) (int, error) {
	x, n := readUvarint(src)
	if n <= 0 {
		return 0, varintError("uint8", n)
	}
	if x > math.MaxUint8 {
		return 0, corrupt("uint8", "value out of range")
	}
	*p = uint8(x)
	return n, nil
}

// decFloat64 and decFloat32 store the raw bits so that NaN payloads survive.
func decFloat64(src []byte, p *uint64) (int, error) {
	if len(src) < 8 {
		return 0, corrupt("float64", "truncated input")
	}
	*p = binary.LittleEndian.Uint64(src)
	return 8, nil
}

func decFloat32(src []byte, p *uint32) (int, error) {
	if len(src) < 4 {
		return 0, corrupt("float32", "truncated input")
	}
	*p = binary.LittleEndian.Uint32(src)
	return 4, nil
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func decBool(src []byte, p *bool) (int, error) {
	if len(src) == 0 {
		return 0, corrupt("bool", "truncated input")
	}
	switch src[0] {
	case 0:
		*p = false
	case 1:
		*p = true
	default:
		return 0, corrupt("bool", "byte is neither 0 nor 1")
	}
	return 1, nil
}

func appendString(dst []byte, s string) []byte {
	dst = appendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// readLen reads a uvarint length prefix and checks that that many bytes
// follow it. It returns the length and the prefix size.
func readLen(src []byte, what string) (int, int, error) {
	l, n := readUvarint(src)
	if n <= 0 {
		return 0, 0, varintError(what, n)
	}
	if l > uint64(len(src)-n) {
		return 0, 0, corrupt(what, "length exceeds input")
	}
	return int(l), n, nil
}

func decString(src []byte, p *string) (int, error) {
	l, n, err := readLen(src, "string")
	if err != nil {
		return 0, err
	}
	*p = string(src[n : n+l])
	return n + l, nil
}

func decBytes(src []byte, p *[]byte) (int, error) {
	l, n, err := readLen(src, "[]byte")
	if err != nil {
		return 0, err
	}
	if l == 0 {
		*p = nil
	} else {
		*p = append([]byte(nil), src[n:n+l]...)
	}
	return n + l, nil
}

// timeEscape, as Unix nanoseconds, introduces a time.Time encoded as
// seconds and nanoseconds because it does not fit in int64 nanoseconds.
const timeEscape = math.MinInt64

// unixNano returns the Unix time sec+nsec (0 <= nsec < 1e9) in nanoseconds
// and whether it is representable as an int64 other than timeEscape.
func unixNano(sec int64, nsec int64) (int64, bool) {
	const (
		lo = math.MinInt64 / 1_000_000_000 // -9223372036
		hi = math.MaxInt64 / 1_000_000_000 // 9223372036
	)
	switch {
	case sec >= lo && sec < hi:
		return sec*1e9 + nsec, true
	case sec == hi && nsec <= math.MaxInt64%1_000_000_000:
		return sec*1e9 + nsec, true
	case sec == lo-1 && nsec > 1_000_000_000+math.MinInt64%1_000_000_000:
		// sec*1e9 wraps around; adding nsec brings it back in range.
		return sec*1e9 + nsec, true
	}
	return 0, false
}

func appendTime(dst []byte, t time.Time) []byte {
	sec, nsec := t.Unix(), int64(t.Nanosecond())
	if ns, ok := unixNano(sec, nsec); ok {
		return appendVarint(dst, ns)
	}
	dst = appendVarint(dst, timeEscape)
	dst = appendVarint(dst, sec)
	return appendUvarint(dst, uint64(nsec))
}

func decTime(src []byte, p *time.Time) (int, error) {
	ns, n := readVarint(src)
	if n <= 0 {
		return 0, varintError("time.Time", n)
	}
	if ns != timeEscape {
		*p = time.Unix(0, ns).UTC()
		return n, nil
	}
	sec, m := readVarint(src[n:])
	if m <= 0 {
		return 0, varintError("time.Time", m)
	}
	n += m
	nsec, m := readUvarint(src[n:])
	if m <= 0 {
		return 0, varintError("time.Time", m)
	}
	n += m
	if nsec >= 1e9 {
		return 0, corrupt("time.Time", "nanoseconds out of range")
	}
	if _, ok := unixNano(sec, int64(nsec)); ok {
		return 0, corrupt("time.Time", "escaped time fits in nanoseconds")
	}
	*p = time.Unix(sec, int64(nsec)).UTC()
	return n, nil
}
