package codec

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

type boundedKey struct {
	A, B int64
	C    uint16
	D    [3]int32
	E    [4]byte
	F    float64
	G    bool
}

func TestOnlyTypesOfBoundedEncodingAreBounded(t *testing.T) {
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"struct of integers", Bounded(MustFor[boundedKey]()), true},
		{"array of int64", Bounded(MustFor[[6]int64]()), true},
		{"struct with a string", Bounded(MustFor[struct {
			A int64
			S string
		}]()), false},
		{"struct with a slice", Bounded(MustFor[struct{ A []int64 }]()), false},
		{"struct over 64 bytes", Bounded(MustFor[[7]int64]()), false},
		{"built-in int64 codec", Bounded(Int64()), false},
	} {
		if c.got != c.want {
			t.Errorf("%s: Bounded = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestAppendBoundedIsAppendWithoutAllocating(t *testing.T) {
	c := MustFor[boundedKey]()
	rng := rand.New(rand.NewPCG(3, 4))
	var buf [BoundedLen]byte
	for range 1000 {
		k := boundedKey{A: int64(rng.Uint64()), B: -rng.Int64(), C: uint16(rng.Uint32()),
			D: [3]int32{int32(rng.Uint32()), -1 << 31, 1<<31 - 1}, E: [4]byte{1, 2, 3, 4}, F: rng.Float64(), G: rng.IntN(2) == 1}
		if got, want := AppendBounded(c, &buf, k), c.Append(nil, k); !bytes.Equal(got, want) {
			t.Fatalf("AppendBounded(%+v) = %x, want %x", k, got, want)
		}
	}
	k := boundedKey{A: -1 << 63, B: 1<<63 - 1}
	if n := testing.AllocsPerRun(1000, func() { AppendBounded(c, &buf, k) }); n != 0 {
		t.Errorf("%v allocations per AppendBounded, want 0", n)
	}
	s := MustFor[struct{ S string }]()
	if got := AppendBounded(s, &buf, struct{ S string }{"not bounded"}); !bytes.Equal(got, s.Append(nil, struct{ S string }{"not bounded"})) {
		t.Errorf("AppendBounded of an unbounded codec = %x", got)
	}
}
