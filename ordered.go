package weir

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/state"
)

// Under fine-grained failover (task.Context.Ordered) keyed operators fire
// what is due in an order their input alone decides, so that a task
// restarted alone, or an active standby, emits the same records in the
// same order: timers by time, then key hash, then a tie-break of the
// operator's; the keys of a window by hash, then encoding.

// dueTimer is a timer popped from a timer set, with its key's hash.
type dueTimer[K comparable] struct {
	t    int64
	hash uint64
	k    K
}

// orderedTimers fires due timers in a fixed order; it keeps its buffer
// between watermarks.
type orderedTimers[K comparable] struct {
	due []dueTimer[K]
}

// fire pops every timer of ts due at wm, sorts them by time, then hash
// (nil: none), then tie, and calls f for each; it goes on until none is
// due, since f may register timers due at wm.
func (o *orderedTimers[K]) fire(ts *state.Timers[K], wm int64, hash func(K) uint64, tie func(a, b K) int, f func(t int64, k K)) {
	for {
		o.due = o.due[:0]
		for {
			t, k, ok := ts.PopDue(wm)
			if !ok {
				break
			}
			d := dueTimer[K]{t: t, k: k}
			if hash != nil {
				d.hash = hash(k)
			}
			o.due = append(o.due, d)
		}
		if len(o.due) == 0 {
			return
		}
		slices.SortFunc(o.due, func(a, b dueTimer[K]) int {
			if c := cmp.Compare(a.t, b.t); c != 0 {
				return c
			}
			if c := cmp.Compare(a.hash, b.hash); c != 0 {
				return c
			}
			return tie(a.k, b.k)
		})
		for _, d := range o.due {
			f(d.t, d.k)
		}
		clear(o.due)
	}
}

// byEncoding orders keys by their encoding in c: the tie-break of keys
// whose hashes collide.
func byEncoding[K comparable](c codec.Codec[K]) func(a, b K) int {
	return func(a, b K) int {
		if a == b {
			return 0
		}
		return bytes.Compare(c.Append(nil, a), c.Append(nil, b))
	}
}

// byWindow orders windows by start, then end.
func byWindow(a, b Window) int {
	return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End))
}

// sortByHash sorts ks by hash, then tie, using tmp as scratch: a radix
// sort on the hash's top 32 bits (four passes of a byte), then a
// comparison sort of each run whose top bits are equal, which random
// hashes make rare and short. It is how a window orders thousands of
// keys at every firing; a comparison sort of them costs several times
// more. Short slices use the comparison sort.
func sortByHash[K comparable](ks []dueTimer[K], tmp *[]dueTimer[K], tie func(a, b K) int) {
	full := func(a, b dueTimer[K]) int {
		if c := cmp.Compare(a.hash, b.hash); c != 0 {
			return c
		}
		return tie(a.k, b.k)
	}
	if len(ks) < 256 {
		slices.SortFunc(ks, full)
		return
	}
	if cap(*tmp) < len(ks) {
		*tmp = make([]dueTimer[K], len(ks))
	}
	src, dst := ks, (*tmp)[:len(ks)]
	for shift := uint(32); shift < 64; shift += 8 {
		var count [257]int
		for i := range src {
			count[int(byte(src[i].hash>>shift))+1]++
		}
		for b := 1; b < 257; b++ {
			count[b] += count[b-1]
		}
		for i := range src {
			b := byte(src[i].hash >> shift)
			dst[count[b]] = src[i]
			count[b]++
		}
		src, dst = dst, src
	}
	// Four passes leave the result in ks again.
	for i := 0; i < len(ks); {
		j := i + 1
		for j < len(ks) && ks[j].hash>>32 == ks[i].hash>>32 {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(ks[i:j], full)
		}
		i = j
	}
	clear(*tmp)
}
