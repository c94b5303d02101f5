package ordered

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// SortByHash orders like a comparison sort by hash, then tie, for short
// and long slices and for hashes that share their top bits.
func TestSortByHashOrdersLikeAComparisonSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var tmp []Due[int64]
	for _, n := range []int{0, 1, 100, 255, 256, 5000} {
		for _, collide := range []bool{false, true} {
			ks := make([]Due[int64], n)
			for i := range ks {
				h := rng.Uint64()
				if collide {
					h = h%7<<32 | h%3 // few distinct top bits, some equal hashes
				}
				ks[i] = Due[int64]{Hash: h, K: rng.Int64N(1000)}
			}
			want := slices.Clone(ks)
			slices.SortFunc(want, func(a, b Due[int64]) int {
				return cmp.Or(cmp.Compare(a.Hash, b.Hash), cmp.Compare(a.K, b.K))
			})
			SortByHash(ks, &tmp, cmp.Compare[int64])
			for i := range ks {
				if ks[i].Hash != want[i].Hash || ks[i].K != want[i].K {
					t.Fatalf("n %d, collide %v: position %d is %+v, want %+v", n, collide, i, ks[i], want[i])
				}
			}
		}
	}
}

func BenchmarkSortKeys(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]Due[int64], 10_000)
	for i := range src {
		src[i] = Due[int64]{Hash: rng.Uint64(), K: int64(i)}
	}
	ks := make([]Due[int64], len(src))
	var tmp []Due[int64]
	b.Run("comparison", func(b *testing.B) {
		for range b.N {
			copy(ks, src)
			slices.SortFunc(ks, func(a, b Due[int64]) int {
				if c := cmp.Compare(a.Hash, b.Hash); c != 0 {
					return c
				}
				return cmp.Compare(a.K, b.K)
			})
		}
	})
	b.Run("radix", func(b *testing.B) {
		for range b.N {
			copy(ks, src)
			SortByHash(ks, &tmp, cmp.Compare[int64])
		}
	})
}
