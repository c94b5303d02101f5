package keyed

import (
	"strings"
	"sync"
	"testing"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/task"
)

type pairKey struct {
	A, B int64
	S    string
}

// A key of any other type hashes as its encoding does, whatever buffer
// it was encoded into before: key groups must not change.
func TestAStructKeyHashesAsItsEncoding(t *testing.T) {
	c := codec.MustFor[pairKey]()
	h := Hasher(c)
	keys := []pairKey{{}, {1, 2, ""}, {-1, 1 << 40, "x"}, {7, 7, strings.Repeat("long ", 2000)}, {3, 4, "after a long one"}}
	for _, k := range keys {
		if got, want := h(k), task.HashBytes(c.Append(nil, k)); got != want {
			t.Errorf("hash of %v = %x, want %x", k.A, got, want)
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				k := pairKey{int64(i), int64(g), "k"}
				if got, want := h(k), task.HashBytes(c.Append(nil, k)); got != want {
					t.Errorf("concurrent hash of %v differs", k)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestHashingAStructKeyAllocatesNothing(t *testing.T) {
	h := Hasher(codec.MustFor[pairKey]())
	k := pairKey{1, 2, "abc"}
	if n := testing.AllocsPerRun(1000, func() { h(k) }); n != 0 {
		t.Fatalf("%v allocations per hash, want 0", n)
	}
}

func BenchmarkHashStructKey(b *testing.B) {
	h := Hasher(codec.MustFor[pairKey]())
	for i := range b.N {
		h(pairKey{int64(i), int64(i) * 31, "k"})
	}
}

// intsKey is a composite key of integer columns, which is encoded on the
// stack to be hashed (codec.Bounded).
type intsKey struct {
	Bidder, Auction int64
	Part            int32
	Flag            bool
}

func TestAKeyOfIntegerColumnsHashesAsItsEncodingWithoutAllocating(t *testing.T) {
	c := codec.MustFor[intsKey]()
	if !codec.Bounded(c) {
		t.Fatal("a struct of integers is not Bounded")
	}
	h := Hasher(c)
	for _, k := range []intsKey{{}, {1, 2, 3, true}, {-1, 1 << 62, -1 << 31, false}, {1<<63 - 1, -1 << 63, 7, true}} {
		if got, want := h(k), task.HashBytes(c.Append(nil, k)); got != want {
			t.Errorf("hash of %+v = %x, want %x", k, got, want)
		}
	}
	k := intsKey{1, 2, 3, true}
	if n := testing.AllocsPerRun(1000, func() { h(k) }); n != 0 {
		t.Fatalf("%v allocations per hash, want 0", n)
	}
}
