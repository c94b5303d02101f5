package state

import (
	"testing"

	"github.com/weir-stream/weir/codec"
)

// BenchmarkKeyedTable reads and then writes a new key per operation, as a
// key's first record does, with each backend; the LSM backend settles
// every 1024 operations, as the runtime does between batches.
func BenchmarkKeyedTable(b *testing.B) {
	for _, backend := range []string{"memory", "pebble"} {
		b.Run(backend, func(b *testing.B) {
			be := NewBackend(0, 128, 128)
			if backend == "pebble" {
				be = newLSM(b, lsmEnv(b, 1<<16), &memFiles{}, 0, 128, 128)
			}
			kg := func(k int64) int { return int(uint64(k) % 128) }
			tb, err := Register(be, "v", TableOptions[int64, string]{Key: codec.Int64(), Value: codec.String(), KeyGroup: kg})
			if err != nil {
				b.Fatal(err)
			}
			v := string(make([]byte, 100))
			b.ReportAllocs()
			for i := range b.N {
				k := int64(i)
				s := be.Shard(kg(k))
				if _, ok := tb.Get(s, k); !ok {
					tb.Put(s, k, v)
				}
				if i%1024 == 0 {
					if err := be.Settle(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
