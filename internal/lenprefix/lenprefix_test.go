package lenprefix

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func TestAFilledLengthReadsAsAUvarint(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 300, 1 << 20} {
		dst, at := Reserve([]byte("head"))
		body := bytes.Repeat([]byte{7}, n)
		dst = append(dst, body...)
		if err := Fill(dst, at); err != nil {
			t.Fatal(err)
		}
		got, k := binary.Uvarint(dst[at:])
		if k != Width || got != uint64(n) {
			t.Errorf("body of %d: read length %d in %d bytes, want %d in %d", n, got, k, n, Width)
		}
		if !bytes.Equal(dst[at+k:], body) || string(dst[:at]) != "head" {
			t.Errorf("body of %d: the buffer around the length changed", n)
		}
	}
}
