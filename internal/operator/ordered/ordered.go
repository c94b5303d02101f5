// Package ordered fires what keyed operators have due in an order their
// input alone decides. Under fine-grained failover (task.Context.Ordered)
// a task restarted alone, or an active standby, must emit the same records
// in the same order as the original: timers fire by time, then key hash,
// then a tie-break of the operator's; the keys of a window by hash, then
// encoding.
package ordered

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/state"
)

// Due is a timer popped from a timer set, at T, with its key K and the
// key's Hash.
type Due[K comparable] struct {
	T    int64
	Hash uint64
	K    K
}

// Timers fires due timers in a fixed order; it keeps its buffer
// between watermarks.
type Timers[K comparable] struct {
	due []Due[K]
}

// Fire pops every timer of ts due at wm, sorts them by time, then hash
// (nil: none), then tie, and calls f for each; it goes on until none is
// due, since f may register timers due at wm.
func (o *Timers[K]) Fire(ts *state.Timers[K], wm int64, hash func(K) uint64, tie func(a, b K) int, f func(t int64, k K)) {
	for {
		o.due = o.due[:0]
		for {
			t, k, ok := ts.PopDue(wm)
			if !ok {
				break
			}
			d := Due[K]{T: t, K: k}
			if hash != nil {
				d.Hash = hash(k)
			}
			o.due = append(o.due, d)
		}
		if len(o.due) == 0 {
			return
		}
		slices.SortFunc(o.due, func(a, b Due[K]) int {
			if c := cmp.Compare(a.T, b.T); c != 0 {
				return c
			}
			if c := cmp.Compare(a.Hash, b.Hash); c != 0 {
				return c
			}
			return tie(a.K, b.K)
		})
		for _, d := range o.due {
			f(d.T, d.K)
		}
		clear(o.due)
	}
}

// ByEncoding orders keys by their encoding in c: the tie-break of keys
// whose hashes collide.
func ByEncoding[K comparable](c codec.Codec[K]) func(a, b K) int {
	return func(a, b K) int {
		if a == b {
			return 0
		}
		return bytes.Compare(c.Append(nil, a), c.Append(nil, b))
	}
}

// SortByHash sorts ks by hash, then tie, using tmp as scratch: a radix
// sort on the hash's top 32 bits (four passes of a byte), then a
// comparison sort of each run whose top bits are equal, which random
// hashes make rare and short. It is how a window orders thousands of
// keys at every firing; a comparison sort of them costs several times
// more. Short slices use the comparison sort.
func SortByHash[K comparable](ks []Due[K], tmp *[]Due[K], tie func(a, b K) int) {
	full := func(a, b Due[K]) int {
		if c := cmp.Compare(a.Hash, b.Hash); c != 0 {
			return c
		}
		return tie(a.K, b.K)
	}
	if len(ks) < 256 {
		slices.SortFunc(ks, full)
		return
	}
	if cap(*tmp) < len(ks) {
		*tmp = make([]Due[K], len(ks))
	}
	src, dst := ks, (*tmp)[:len(ks)]
	for shift := uint(32); shift < 64; shift += 8 {
		var count [257]int
		for i := range src {
			count[int(byte(src[i].Hash>>shift))+1]++
		}
		for b := 1; b < 257; b++ {
			count[b] += count[b-1]
		}
		for i := range src {
			b := byte(src[i].Hash >> shift)
			dst[count[b]] = src[i]
			count[b]++
		}
		src, dst = dst, src
	}
	// Four passes leave the result in ks again.
	for i := 0; i < len(ks); {
		j := i + 1
		for j < len(ks) && ks[j].Hash>>32 == ks[i].Hash>>32 {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(ks[i:j], full)
		}
		i = j
	}
	clear(*tmp)
}
