package codec_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/weir-stream/weir/codec"
)

// Point encodes itself as two fixed-width int32s, with unexported fields
// that For could not reach on its own.
type Point struct{ x, y int32 }

func (p Point) AppendBinary(dst []byte) ([]byte, error) {
	dst = binary.BigEndian.AppendUint32(dst, uint32(p.x))
	return binary.BigEndian.AppendUint32(dst, uint32(p.y)), nil
}

func (p *Point) DecodeBinary(src []byte) (int, error) {
	if len(src) < 8 {
		return 0, fmt.Errorf("point needs 8 bytes, have %d: %w", len(src), codec.ErrCorrupt)
	}
	p.x = int32(binary.BigEndian.Uint32(src))
	p.y = int32(binary.BigEndian.Uint32(src[4:]))
	return 8, nil
}

type Shape struct {
	Name   string
	Origin Point
	Path   []Point
	ByName map[string]Point
	Opt    *Point
}

func TestMarshaler(t *testing.T) {
	v := Shape{
		Name:   "tri",
		Origin: Point{1, -1},
		Path:   []Point{{0, 0}, {3, 4}},
		ByName: map[string]Point{"a": {5, 6}},
		Opt:    &Point{7, 8},
	}
	c := codec.MustFor[Shape]()
	enc := roundTrip(t, c, v, func(a, b Shape) bool { return reflect.DeepEqual(a, b) })
	if !strings.Contains(string(enc), "\x00\x00\x00\x01\xff\xff\xff\xff") {
		t.Fatalf("encoding % x does not contain Point's own encoding", enc)
	}
	roundTrip(t, codec.MustFor[Point](), Point{-5, 9}, equal)
}

// lenient returns errors that do not wrap ErrCorrupt and bad lengths.
type lenient struct{ n int }

func (l lenient) AppendBinary(dst []byte) ([]byte, error) {
	if l.n < 0 {
		return dst, errors.New("negative")
	}
	return append(dst, byte(l.n)), nil
}

var errLenient = errors.New("lenient says no")

func (l *lenient) DecodeBinary(src []byte) (int, error) {
	switch {
	case len(src) == 0 || src[0] == 0xdd:
		return 0, errLenient
	case src[0] == 0xee:
		return 100, nil // more than there is
	}
	l.n = int(src[0])
	return 1, nil
}

func TestMarshalerErrors(t *testing.T) {
	c := codec.MustFor[[]lenient]()
	var got []lenient
	_, err := c.Decode([]byte{1, 0xdd}, &got)
	if !errors.Is(err, codec.ErrCorrupt) || !errors.Is(err, errLenient) {
		t.Errorf("got %v, want an error wrapping ErrCorrupt and the DecodeBinary error", err)
	}
	_, err = c.Decode([]byte{1, 0xee}, &got)
	if want := "codec: decoding [0] (codec_test.lenient): DecodeBinary returned length 100 for 1 bytes of input"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}

	defer func() {
		r := recover()
		if err, ok := r.(error); !ok || err.Error() != "codec: codec_test.lenient.AppendBinary: negative" {
			t.Errorf("Append with a failing AppendBinary panicked with %v", r)
		}
	}()
	c.Append(nil, []lenient{{-1}})
	t.Error("Append with a failing AppendBinary did not panic")
}
