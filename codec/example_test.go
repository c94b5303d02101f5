package codec_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/weir-stream/weir/codec"
)

// Trade is a record a pipeline might carry.
type Trade struct {
	Symbol string
	Price  float64
	Qty    int64
	At     time.Time
	Venues map[string]int64
}

func ExampleFor() {
	c, err := codec.For[Trade]()
	if err != nil {
		panic(err) // the type has an unsupported field
	}
	in := Trade{Symbol: "ACME", Price: 12.5, Qty: 100, At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Venues: map[string]int64{"XNAS": 60, "XNYS": 40}}

	buf := c.Append(nil, in) // append to a reused buffer in real code
	var out Trade
	n, err := c.Decode(buf, &out)
	if err != nil {
		panic(err)
	}
	fmt.Println(n == len(buf), out.Symbol, out.Price, out.Qty, out.At, out.Venues)

	_, err = c.Decode(buf[:5], &out)
	fmt.Println(err)

	_, err = codec.For[struct{ Done chan bool }]()
	fmt.Println(err)
	// Output:
	// true ACME 12.5 100 2025-01-02 03:04:05 +0000 UTC map[XNAS:60 XNYS:40]
	// codec: decoding Trade.Price (float64): truncated input
	// codec: no codec for field struct { Done chan bool }.Done of type chan bool
}

// centiCodec is a custom Codec: it stores a price as a whole number of
// cents in a zig-zag varint, which is smaller than a float64's 8 bytes.
type centiCodec struct{}

func (centiCodec) Append(dst []byte, v float64) []byte {
	return binary.AppendVarint(dst, int64(math.Round(v*100)))
}

func (centiCodec) Decode(src []byte, v *float64) (int, error) {
	cents, n := binary.Varint(src)
	if n <= 0 {
		return 0, fmt.Errorf("codec: decoding cents: %w", codec.ErrCorrupt)
	}
	*v = float64(cents) / 100
	return n, nil
}

func Example_customCodec() {
	var c codec.Codec[float64] = centiCodec{}
	buf := c.Append(nil, 19.99)
	var price float64
	n, err := c.Decode(buf, &price)
	fmt.Println(len(buf), n, price, err)

	_, err = c.Decode([]byte{0x80}, &price)
	fmt.Println(err)
	// Output:
	// 2 2 19.99 <nil>
	// codec: decoding cents: codec: corrupt input
}

// Version has unexported fields, so For cannot encode it structurally; it
// implements Marshaler and Unmarshaler to encode itself as three bytes.
type Version struct{ major, minor, patch uint8 }

func (v Version) AppendBinary(dst []byte) ([]byte, error) {
	return append(dst, v.major, v.minor, v.patch), nil
}

func (v *Version) DecodeBinary(src []byte) (int, error) {
	if len(src) < 3 {
		return 0, fmt.Errorf("version needs 3 bytes: %w", codec.ErrCorrupt)
	}
	v.major, v.minor, v.patch = src[0], src[1], src[2]
	return 3, nil
}

func ExampleMarshaler() {
	type Release struct {
		Name    string
		Version Version
	}
	c := codec.MustFor[Release]()
	buf := c.Append(nil, Release{Name: "weir", Version: Version{1, 2, 3}})
	fmt.Printf("% x\n", buf)

	var r Release
	_, err := c.Decode(buf, &r)
	fmt.Println(r.Name, r.Version, err)
	// Output:
	// 04 77 65 69 72 01 02 03
	// weir {1 2 3} <nil>
}
