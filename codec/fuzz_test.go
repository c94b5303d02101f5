package codec_test

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weir-stream/weir/codec"
)

type fuzzInner struct {
	A int16
	B [2]uint8
	C *string
}

// fuzzRecord exercises every encoding kind For supports.
type fuzzRecord struct {
	Key   string
	Ts    int64
	V     float64
	F     float32
	N     uint32
	U8    uint8
	B     bool
	When  time.Time
	Wait  time.Duration
	Tags  []string
	M     map[string]int32
	FM    map[float64]bool
	P     *fuzzInner
	In    fuzzInner
	Arr   [2]int16
	Raw   []byte
	Nest  [][]fuzzInner
	Empty []struct{}
	Pt    Point
}

func fuzzSeeds() []fuzzRecord {
	s := "s"
	return []fuzzRecord{
		{},
		{
			Key: "k", Ts: -5, V: math.NaN(), F: -1, N: 300, U8: 200, B: true,
			When: time.Unix(1_700_000_000, 1).UTC(), Wait: time.Hour,
			Tags: []string{"a", "bb"}, M: map[string]int32{"x": 1, "y": -1},
			FM: map[float64]bool{math.NaN(): true, 0: false, math.Inf(-1): true},
			P:  &fuzzInner{A: 1, C: &s}, In: fuzzInner{B: [2]uint8{1, 2}},
			Arr: [2]int16{-1, 1}, Raw: []byte{0, 0xff}, Nest: [][]fuzzInner{{{A: 2}}, nil},
			Empty: make([]struct{}, 3), Pt: Point{1, 2},
		},
	}
}

// FuzzDecodeStruct feeds arbitrary bytes to a struct codec. Decode must not
// panic, must fail only with ErrCorrupt, and, because the format has one
// encoding per value, a successful decode must re-encode to exactly the
// bytes it consumed.
func FuzzDecodeStruct(f *testing.F) {
	c := codec.MustFor[fuzzRecord]()
	for _, v := range fuzzSeeds() {
		f.Add(c.Append(nil, v))
	}
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, src []byte) {
		var v fuzzRecord
		n, err := c.Decode(src, &v)
		if err != nil {
			if !errors.Is(err, codec.ErrCorrupt) || n != 0 {
				t.Fatalf("Decode = %d, %v; want 0 and ErrCorrupt", n, err)
			}
			return
		}
		if n < 0 || n > len(src) {
			t.Fatalf("Decode consumed %d of %d bytes", n, len(src))
		}
		if got := c.Append(nil, v); !bytes.Equal(got, src[:n]) {
			t.Fatalf("re-encoding differs from the consumed input:\n got % x\nwant % x", got, src[:n])
		}
	})
}

// TestGarbage is a quick, deterministic version of FuzzDecodeStruct that
// runs with every go test: mutated encodings and random bytes.
func TestGarbage(t *testing.T) {
	c := codec.MustFor[fuzzRecord]()
	rng := rand.New(rand.NewPCG(1, 2))
	valid := c.Append(nil, fuzzSeeds()[1])
	for i := range 20000 {
		var src []byte
		if i%2 == 0 {
			src = append([]byte(nil), valid...)
			for range 1 + rng.IntN(4) {
				src[rng.IntN(len(src))] = byte(rng.Uint32())
			}
			src = src[:rng.IntN(len(src)+1)]
		} else {
			src = make([]byte, rng.IntN(64))
			for j := range src {
				src[j] = byte(rng.Uint32())
			}
		}
		var v fuzzRecord
		n, err := c.Decode(src, &v)
		if err != nil {
			if !errors.Is(err, codec.ErrCorrupt) {
				t.Fatalf("Decode(% x) = %v; want ErrCorrupt", src, err)
			}
			continue
		}
		if got := c.Append(nil, v); !bytes.Equal(got, src[:n]) {
			t.Fatalf("re-encoding of % x differs: % x", src[:n], got)
		}
	}
}
