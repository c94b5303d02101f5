package state

import "hash/maphash"

// dirtyKeys records, shard by shard, the keys of a table written since its
// last snapshot, for the next delta of its chain (chain.go).
//
// A table whose values change in place marks a key at every read that
// finds it, so marking is on the hot path of such a job: a set (a Go map)
// costs a hash-table insert, most often a cache miss, per read. Instead
// each shard logs its keys in a slice, and a small direct-mapped filter of
// the keys logged since the snapshot keeps a key read again soon from
// being logged again. A key that left the filter and is written again is
// logged twice; a delta holds it twice, each time with its entry's state
// at the snapshot, which a restore applies in order to the same result.
// A shard whose log outgrows twice its entries turns its log into a set,
// so the memory stays proportional to the state whatever the pattern of
// writes.
type dirtyKeys[K comparable] struct {
	logs   [][]K            // per shard: keys logged since the snapshot, perhaps repeated
	sets   []map[K]struct{} // per shard: its keys as a set, once its log outgrew it
	room   []int            // per shard: the most keys its log or set held (reset)
	recent []recentKey[K]   // a filter of keys logged since the snapshot, by hash
	seed   maphash.Seed
}

// recentKey is a slot of dirtyKeys' filter: a key of shard s. A table's
// shards may hold the same keys (a window's bucket in each key group).
type recentKey[K comparable] struct {
	k    K
	s    int32
	used bool
}

// recentSlots is the size of the filter, a power of two.
const recentSlots = 4096

// logSlack is the size below which a shard's log never turns into a set.
const logSlack = 4096

func newDirtyKeys[K comparable](shards int) *dirtyKeys[K] {
	return &dirtyKeys[K]{logs: make([][]K, shards), sets: make([]map[K]struct{}, shards),
		room: make([]int, shards), seed: maphash.MakeSeed()}
}

// add records that k of shard s, which holds entries entries, was
// written. It returns false when k was known to be recorded already.
func (d *dirtyKeys[K]) add(s int, k K, entries int) bool {
	if set := d.sets[s]; set != nil {
		n := len(set)
		set[k] = struct{}{}
		return len(set) > n
	}
	if d.recent == nil {
		d.recent = make([]recentKey[K], recentSlots)
	}
	h := maphash.Comparable(d.seed, k) + uint64(s)*0x9e3779b97f4a7c15
	slot := &d.recent[h&(recentSlots-1)]
	if slot.used && slot.k == k && slot.s == int32(s) {
		return false
	}
	*slot = recentKey[K]{k: k, s: int32(s), used: true}
	log := append(d.logs[s], k)
	if len(log) > 2*entries+logSlack {
		set := make(map[K]struct{}, len(log))
		for _, k := range log {
			set[k] = struct{}{}
		}
		d.sets[s], log = set, log[:0]
	}
	d.logs[s] = log
	return true
}

// count returns how many keys are recorded, repeats included.
func (d *dirtyKeys[K]) count() int {
	n := 0
	for s := range d.logs {
		n += len(d.logs[s]) + len(d.sets[s])
	}
	return n
}

// each calls f with every key recorded for shard s, a logged key as often
// as it was logged.
func (d *dirtyKeys[K]) each(s int, f func(K)) {
	for _, k := range d.logs[s] {
		f(k)
	}
	for k := range d.sets[s] {
		f(k)
	}
}

// reset forgets every key: a snapshot holds them. A shard's log keeps its
// memory for the next snapshot's keys, so that it does not grow again from
// nothing; unless a burst of writes made it much larger than the writes
// since need.
func (d *dirtyKeys[K]) reset() {
	for s := range d.logs {
		n := len(d.logs[s]) + len(d.sets[s])
		d.sets[s] = nil
		d.room[s] = max(d.room[s], n)
		if n*8 < d.room[s] {
			d.logs[s], d.room[s] = nil, 0
			continue
		}
		d.logs[s] = d.logs[s][:0]
	}
	clear(d.recent)
}
