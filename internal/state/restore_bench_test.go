package state

import (
	"fmt"
	"testing"

	"github.com/weir-stream/weir/codec"
)

// BenchmarkRestore decodes a snapshot of n int64 -> int64 entries in 64
// key groups into a backend owning them all: the work a task does before
// it runs again after a failure.
func BenchmarkRestore(b *testing.B) {
	for _, n := range []int{1 << 20, 8 << 20} {
		b.Run(fmt.Sprintf("%dM", n>>20), func(b *testing.B) {
			kg := func(k int64) int { return int(uint64(k) % 64) }
			src := NewBackend(0, 64, 64)
			tb, err := Register(src, "t", TableOptions[int64, int64]{Key: codec.Int64(), Value: codec.Int64(), KeyGroup: kg})
			if err != nil {
				b.Fatal(err)
			}
			for k := range int64(n) {
				tb.Put(src.Shard(kg(k)), k, k)
			}
			data := snap(b, src)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				dst := NewBackend(0, 64, 64)
				if err := dst.Restore(data); err != nil {
					b.Fatal(err)
				}
				rt, err := Register(dst, "t", TableOptions[int64, int64]{Key: codec.Int64(), Value: codec.Int64(), KeyGroup: kg})
				if err != nil {
					b.Fatal(err)
				}
				if rt.Len() != n {
					b.Fatalf("restored %d entries, want %d", rt.Len(), n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
		})
	}
}

// BenchmarkRestoreBucket decodes one window bucket of n keys (a map
// value, as MapCodec encodes it): how a window's state is restored.
func BenchmarkRestoreBucket(b *testing.B) {
	const n = 4 << 20
	c := MapCodec(codec.Int64(), codec.Int64())
	m := make(map[int64]int64, n)
	for k := range int64(n) {
		m[k] = k
	}
	data := c.Append(nil, m)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var out map[int64]int64
		if _, err := c.Decode(data, &out); err != nil || len(out) != n {
			b.Fatalf("decoded %d entries (%v), want %d", len(out), err, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entry")
}

type benchV1 struct {
	Count int32
	Sum   int64
	Name  string
}

type benchV2 struct {
	Sum   int64
	Count int64
	Max   int64 `codec:"default=-1"`
}

// BenchmarkRestoreStruct decodes a snapshot of 1M int64 -> struct
// entries into the same struct type ("same": the codec itself reads
// them) and into a changed one ("evolved": fields reordered, widened,
// removed and added, read by the converting codec).
func BenchmarkRestoreStruct(b *testing.B) {
	const n = 1 << 20
	kg := func(k int64) int { return int(uint64(k) % 64) }
	src := NewBackend(0, 64, 64)
	tb, err := Register(src, "t", TableOptions[int64, benchV1]{Key: codec.Int64(), Value: codec.MustFor[benchV1](), KeyGroup: kg})
	if err != nil {
		b.Fatal(err)
	}
	for k := range int64(n) {
		tb.Put(src.Shard(kg(k)), k, benchV1{Count: int32(k), Sum: k, Name: "name"})
	}
	data := snap(b, src)
	b.Run("same", func(b *testing.B) { benchRestoreInto(b, data, kg, codec.MustFor[benchV1]()) })
	b.Run("evolved", func(b *testing.B) { benchRestoreInto(b, data, kg, codec.MustFor[benchV2]()) })
}

func benchRestoreInto[V any](b *testing.B, data []byte, kg func(int64) int, value codec.Codec[V]) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for range b.N {
		dst := NewBackend(0, 64, 64)
		if err := dst.Restore(data); err != nil {
			b.Fatal(err)
		}
		rt, err := Register(dst, "t", TableOptions[int64, V]{Key: codec.Int64(), Value: value, KeyGroup: kg})
		if err != nil {
			b.Fatal(err)
		}
		if rt.Len() != 1<<20 {
			b.Fatalf("restored %d entries", rt.Len())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(1<<20), "ns/entry")
}
