package state

import (
	"fmt"
	"testing"

	"github.com/weir-stream/weir/codec"
)

// BenchmarkTTLValues compares a read and a write of a value in a table
// without a time-to-live, and with one (the clock is a counter here, so
// the numbers leave out the cost of reading a real clock).
func BenchmarkTTLValues(b *testing.B) {
	const keys = 1 << 14
	names := make([]string, keys)
	for i := range names {
		names[i] = fmt.Sprint(i)
	}
	b.Run("plain", func(b *testing.B) {
		t, err := Register(NewBackend(0, 4, 4), "v", TableOptions[string, int64]{Key: codec.String(), Value: codec.Int64(), KeyGroup: shardOf})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; b.Loop(); i++ {
			k := names[i%keys]
			v, _ := t.Get(shardOf(k), k)
			t.Put(shardOf(k), k, v+1)
		}
	})
	for _, onRead := range []bool{false, true} {
		b.Run(fmt.Sprintf("ttl/onRead=%v", onRead), func(b *testing.B) {
			t, err := Register(NewBackend(0, 4, 4), TTLName("v"), TableOptions[string, Stamped[int64]]{Key: codec.String(), Value: codec.MustFor[Stamped[int64]](), KeyGroup: shardOf})
			if err != nil {
				b.Fatal(err)
			}
			var now int64
			v := NewTTLValues(t, TTL{Millis: 1 << 40, OnRead: onRead, Now: func() int64 { now++; return now }})
			for i := 0; b.Loop(); i++ {
				k := names[i%keys]
				x, _ := v.Get(shardOf(k), k)
				v.Put(shardOf(k), k, x+1)
			}
		})
	}
}
