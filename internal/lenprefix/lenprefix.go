// Package lenprefix writes a body of unknown size straight into a buffer
// behind its length: Reserve leaves room for the length, the caller
// appends the body, Fill writes the length in front of it. The length is
// a uvarint padded to Width bytes (continuation bits set on the leading
// bytes), which binary.Uvarint reads like any other, so readers of
// minimally encoded lengths read these too. It spares the copy of a body
// encoded into a buffer of its own and then appended: for a snapshot of
// large state, that copy costs as much as the encoding.
package lenprefix

import "fmt"

// Width is the size of a reserved length: seven bits a byte, so bodies up
// to 4 TiB.
const Width = 6

// Reserve appends room for a length to dst and returns dst and the offset
// of the room, for Fill.
func Reserve(dst []byte) ([]byte, int) {
	return append(dst, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00), len(dst)
}

// Fill writes, in the room Reserve left at offset at, the length of what
// dst holds after it. It fails when the body is too long for Width.
func Fill(dst []byte, at int) error {
	n := uint64(len(dst) - at - Width)
	if n >= 1<<(7*Width) {
		return fmt.Errorf("lenprefix: a body of %d bytes is too long", n)
	}
	for i := range Width - 1 {
		dst[at+i] = byte(n) | 0x80
		n >>= 7
	}
	dst[at+Width-1] = byte(n)
	return nil
}
