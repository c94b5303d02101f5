package weir

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortByHash orders like a comparison sort by hash, then tie, for short
// and long slices and for hashes that share their top bits.
func TestSortByHashOrdersLikeAComparisonSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var tmp []dueTimer[int64]
	for _, n := range []int{0, 1, 100, 255, 256, 5000} {
		for _, collide := range []bool{false, true} {
			ks := make([]dueTimer[int64], n)
			for i := range ks {
				h := rng.Uint64()
				if collide {
					h = h%7<<32 | h%3 // few distinct top bits, some equal hashes
				}
				ks[i] = dueTimer[int64]{hash: h, k: rng.Int64N(1000)}
			}
			want := slices.Clone(ks)
			slices.SortFunc(want, func(a, b dueTimer[int64]) int {
				return cmp.Or(cmp.Compare(a.hash, b.hash), cmp.Compare(a.k, b.k))
			})
			sortByHash(ks, &tmp, cmp.Compare[int64])
			for i := range ks {
				if ks[i].hash != want[i].hash || ks[i].k != want[i].k {
					t.Fatalf("n %d, collide %v: position %d is %+v, want %+v", n, collide, i, ks[i], want[i])
				}
			}
		}
	}
}

func BenchmarkSortKeys(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]dueTimer[int64], 10_000)
	for i := range src {
		src[i] = dueTimer[int64]{hash: rng.Uint64(), k: int64(i)}
	}
	ks := make([]dueTimer[int64], len(src))
	var tmp []dueTimer[int64]
	b.Run("comparison", func(b *testing.B) {
		for range b.N {
			copy(ks, src)
			slices.SortFunc(ks, func(a, b dueTimer[int64]) int {
				if c := cmp.Compare(a.hash, b.hash); c != 0 {
					return c
				}
				return cmp.Compare(a.k, b.k)
			})
		}
	})
	b.Run("radix", func(b *testing.B) {
		for range b.N {
			copy(ks, src)
			sortByHash(ks, &tmp, cmp.Compare[int64])
		}
	})
}
