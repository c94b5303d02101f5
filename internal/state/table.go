package state

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/weir-stream/weir/codec"
)

// Table maps keys to values: the storage of keyed state. K is the
// operator's key, possibly combined with a namespace such as a window.
//
// Keyed tables are split into one map per key group the instance owns (a
// shard), so that a snapshot freezes and a later write copies only one key
// group at a time, and so that entries can move to another subtask by key
// group. The caller names the shard of every access: the key group of the
// current key minus the first key group owned (see Backend.Shard); tables
// registered without a key-group function (and not Sharded) have a single shard 0.
type Table[K comparable, V any] struct {
	name     string
	b        *Backend
	shards   []map[K]V
	frozen   []bool
	owned    []map[K]struct{} // per shard: values copied since the last snapshot
	key      codec.Codec[K]
	value    codec.Codec[V]
	keyGroup func(K) int // nil: no check of restored keys
	sharded  bool        // one shard per key group owned (else one shard, key group 0)
	clone    func(V) V
	inPlace  bool             // encoded at freeze: values may change in place (TableOptions.InPlace)
	held     bool             // a snapshot may hold values of the table: copy before a change (shared)
	adopted  bool             // took values of a retired instance (adopt.go): always held
	pending  atomic.Int32     // frozen encodings not run yet (freeze, captureDelta)
	dirty    []map[K]struct{} // per shard: keys written since the last snapshot, when incremental (chain.go)
	room     []int            // per shard: the most keys its dirty map held (forget)
	chain    []*chainLink     // the files of the last incremental snapshot, base first (chain.go)
	fullSize atomic.Int64     // bytes of the last encoding of all entries: decides chaining (chain.go)
	perEntry atomic.Int64     // bytes per entry of the last encoding, times 256: sizes the next (sizeFor)
	perDelta atomic.Int64     // the same for the last delta (chain.go)
	entries  entryLog[K, V]   // set for a table of maps written entry by entry (maptable.go)
	schemas  []byte           // the encoded partSchema of key and value, recorded with snapshots
	l        *tableLSM[K, V]  // set when the table lives in an LSM store (lsmtable.go)
}

// TableOptions describe a table's types and layout.
type TableOptions[K comparable, V any] struct {
	// Key and Value encode entries in snapshots. A snapshot records
	// their schemas when they have one (codec.Evolvable); a restore then
	// reads values of an earlier schema through Value's Reader, and fails
	// with an error wrapping codec.ErrIncompatible when Value cannot
	// convert them or the keys' schema changed (see schema.go).
	Key   codec.Codec[K]
	Value codec.Codec[V]
	// KeyGroup returns a key's key group; nil for an unsharded table.
	KeyGroup func(K) int
	// Sharded splits a table without KeyGroup by key group all the same:
	// its keys do not tell their key group (a window whose value holds
	// the keys of one key group), so the caller names each entry's shard,
	// and a restore trusts the key group stored with each entry.
	Sharded bool
	// Clone copies a value for GetMutable: deep enough that the caller's
	// changes do not reach the copy a snapshot holds.
	Clone func(V) V
	// InPlace says that code the table does not control may change its
	// values in place beyond what Clone copies: a user's function given
	// an accumulator holding a map, or a window's records it may sort
	// (see Mutable). A snapshot encodes such a table in its synchronous
	// part, so that no value changes while it is encoded; other tables
	// are frozen copy-on-write and encoded later, on another goroutine.
	// GetMutable then never copies: the snapshot shares no value.
	InPlace bool

	entries entryLog[K, V] // RegisterMap's
}

// Register returns the table named name, creating it on first use and
// filling it from a restored snapshot. It fails when the name is taken by
// state of other types, when the codecs are missing, or when the restored
// entries were written under schemas the codecs cannot read (an error
// wrapping codec.ErrIncompatible).
func Register[K comparable, V any](b *Backend, name string, o TableOptions[K, V]) (*Table[K, V], error) {
	if p, ok := b.parts[name]; ok {
		t, ok := p.(*Table[K, V])
		if !ok {
			return nil, fmt.Errorf("state %q is already registered with other types", name)
		}
		return t, nil
	}
	if o.Key == nil || o.Value == nil {
		return nil, fmt.Errorf("state %q: missing codec for its keys or values", name)
	}
	sharded := o.KeyGroup != nil || o.Sharded
	n := 1
	if sharded {
		n = b.kgEnd - b.kgStart
	}
	t := &Table[K, V]{name: name, b: b, shards: make([]map[K]V, n), frozen: make([]bool, n),
		owned: make([]map[K]struct{}, n), key: o.Key, value: o.Value, keyGroup: o.KeyGroup, sharded: sharded, clone: o.Clone,
		inPlace: o.InPlace, entries: o.entries, schemas: partSchema{schemaOf(o.Key), schemaOf(o.Value)}.encode()}
	for i := range t.shards {
		t.shards[i] = map[K]V{}
	}
	if b.inc != nil {
		t.dirty, t.room = make([]map[K]struct{}, n), make([]int, n)
	}
	written, err := b.claimSchema(name)
	if err != nil {
		return nil, fmt.Errorf("restoring state %q: %w", name, err)
	}
	if b.lsm != nil && sharded {
		cs, _ := b.claim(name)
		if err := b.openStore(); err != nil {
			return nil, fmt.Errorf("restoring state %q: %w", name, err)
		}
		if err := t.inLSM(written, cs); err != nil {
			return nil, fmt.Errorf("restoring state %q: %w", name, err)
		}
		b.add(name, t)
		return t, nil
	}
	if err := t.adopt(b.takeAdopted(name)); err != nil {
		return nil, err
	}
	if cs, ok := b.claim(name); ok {
		kc, vc, err := readers(o.Key, o.Value, written)
		for _, c := range cs {
			if err == nil {
				err = t.restoreChunk(c, kc, vc)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("restoring state %q: %w", name, err)
		}
	}
	b.add(name, t)
	return t, nil
}

// Shard returns the shard of key group kg, for tables with a key-group
// function. kg must be one of the instance's key groups (KeyGroups).
func (b *Backend) Shard(kg int) int { return kg - b.kgStart }

// KeyGroups returns the key groups [start, end) the instance owns.
func (b *Backend) KeyGroups() (start, end int) { return b.kgStart, b.kgEnd }

// kg returns the key group of shard s.
func (t *Table[K, V]) kg(s int) int {
	if t.sharded {
		return t.b.kgStart + s
	}
	return 0
}

// Get returns the value of k in shard s.
func (t *Table[K, V]) Get(s int, k K) (V, bool) {
	if t.l != nil {
		v, ok := t.l.get(s, k)
		if ok && t.inPlace {
			t.l.dirty[s][k] = struct{}{} // the caller may change it in place
		}
		return v, ok
	}
	v, ok := t.shards[s][k]
	if ok && t.inPlace {
		t.mark(s, k) // the caller may change it in place
	}
	return v, ok
}

// writable returns shard s's map, copying it first if a snapshot holds it.
func (t *Table[K, V]) writable(s int) map[K]V {
	if t.frozen[s] {
		t.shards[s] = maps.Clone(t.shards[s])
		t.frozen[s] = false
		t.owned[s] = nil
	}
	return t.shards[s]
}

// Put sets the value of k in shard s.
func (t *Table[K, V]) Put(s int, k K, v V) {
	if t.l != nil {
		t.l.put(s, k, v)
		return
	}
	t.writable(s)[k] = v
	t.mark(s, k)
}

// Delete removes k from shard s.
func (t *Table[K, V]) Delete(s int, k K) {
	if t.l != nil {
		t.l.delete(s, k)
		return
	}
	if _, ok := t.shards[s][k]; ok {
		delete(t.writable(s), k)
		t.mark(s, k)
		if t.owned[s] != nil {
			delete(t.owned[s], k)
		}
	}
}

// GetMutable returns the value of k in shard s such that the caller may
// change it in place (a map or a slice's elements): after a snapshot, the
// first GetMutable of each key stores and returns a copy (Clone), unless
// the table is encoded at the snapshot (InPlace).
func (t *Table[K, V]) GetMutable(s int, k K) (V, bool) { return t.getMutable(s, k, true) }

// getMutable is GetMutable; unless whole, it does not mark k written, for
// a MapTable that logs the entries it writes (maptable.go).
func (t *Table[K, V]) getMutable(s int, k K, whole bool) (V, bool) {
	if t.l != nil {
		v, ok := t.l.get(s, k)
		if ok {
			t.l.dirty[s][k] = struct{}{}
		}
		return v, ok
	}
	v, ok := t.shards[s][k]
	if !ok {
		return v, false
	}
	if whole {
		t.mark(s, k)
	}
	if t.shared() {
		if _, own := t.owned[s][k]; !own {
			v = t.clone(v)
			t.writable(s)[k] = v
			if t.owned[s] == nil {
				t.owned[s] = map[K]struct{}{}
			}
			t.owned[s][k] = struct{}{}
		}
	}
	return v, true
}

// PutNew stores a value the caller created (so it owns it) for k.
func (t *Table[K, V]) PutNew(s int, k K, v V) {
	if t.l != nil {
		t.l.put(s, k, v)
		return
	}
	t.writable(s)[k] = v
	t.mark(s, k)
	if t.shared() {
		if t.owned[s] == nil {
			t.owned[s] = map[K]struct{}{}
		}
		t.owned[s][k] = struct{}{}
	}
}

// shared reports whether values may be shared with a snapshot: only
// while one that froze them may still encode them (held), and never for
// a table encoded at the snapshot.
func (t *Table[K, V]) shared() bool { return t.held && !t.inPlace }

// Len returns the number of keys.
func (t *Table[K, V]) Len() int {
	if t.l != nil {
		return t.l.len()
	}
	n := 0
	for _, m := range t.shards {
		n += len(m)
	}
	return n
}

// Shards returns the number of shards.
func (t *Table[K, V]) Shards() int { return len(t.shards) }

// All calls f for every entry of shard s until f returns false. f must not
// change the table.
func (t *Table[K, V]) All(s int, f func(K, V) bool) {
	if t.l != nil {
		t.l.all(s, f)
		return
	}
	for k, v := range t.shards[s] {
		if !f(k, v) {
			return
		}
	}
}

func (t *Table[K, V]) view() func([]byte) []byte {
	shards := append([]map[K]V(nil), t.shards...)
	return func(dst []byte) []byte { return t.encode(dst, shards) }
}

// freeze encodes an InPlace table at once, and a small one while the
// snapshot's budget lasts (Backend.syncBudget); any other it freezes, for
// the returned function to encode later, on another goroutine.
//
// A small table is encoded at once because copying its values on their
// next change would cost more: a window's buckets, for one, are written
// again right after the barrier, and each would be copied whole. Once no
// frozen encoding of the table is pending, no snapshot shares its values,
// and GetMutable stops copying them (release).
func (t *Table[K, V]) freeze() func([]byte) []byte {
	n := 0
	for _, m := range t.shards {
		n += len(m)
	}
	if size := int64(t.sizeFor(n)); t.inPlace || (size > 0 && size <= t.b.syncBudget) {
		t.b.syncBudget -= size
		data := t.encode(make([]byte, 0, size), t.shards)
		t.fullSize.Store(int64(len(data)))
		t.noteSize(n, len(data))
		if t.pending.Load() == 0 {
			t.release()
		}
		return func(dst []byte) []byte { return append(dst, data...) }
	}
	frozen := append([]map[K]V(nil), t.shards...)
	done := t.hold()
	for i := range t.frozen {
		t.frozen[i] = true
	}
	return func(dst []byte) []byte {
		defer done()
		dst = slices.Grow(dst, t.sizeFor(n))
		start := len(dst)
		dst = t.encode(dst, frozen)
		t.fullSize.Store(int64(len(dst) - start))
		t.noteSize(n, len(dst)-start)
		return dst
	}
}

// hold records that a snapshot to be encoded later shares the table's
// values: each is copied before its first change (GetMutable). It returns
// what the encoding calls when done; once none is pending, the next
// snapshot encoded at once releases the values.
func (t *Table[K, V]) hold() (done func()) {
	t.held = true
	for i := range t.owned {
		t.owned[i] = nil
	}
	t.pending.Add(1)
	var once sync.Once
	return func() { once.Do(func() { t.pending.Add(-1) }) }
}

// release records that no snapshot shares the table's values or shard
// maps any more, unless it adopted a retired instance's values, which
// others may still encode.
func (t *Table[K, V]) release() {
	if t.adopted {
		return
	}
	t.held = false
	for i := range t.frozen {
		t.frozen[i] = false
		t.owned[i] = nil
	}
}

// sizeFor returns the bytes to reserve for encoding n entries: as many as
// the last encoding took per entry, and an eighth more, so that a large
// snapshot is not copied again each time its buffer grows. It is 0 before
// the first encoding.
func (t *Table[K, V]) sizeFor(n int) int { return sizeFor(&t.perEntry, n) }

// sizeFor returns the bytes to reserve for n entries of per bytes each,
// times 256 (notePer).
func sizeFor(per *atomic.Int64, n int) int {
	b := int64(n) * per.Load() / 256
	if b == 0 {
		return 0
	}
	return int(b + b/8 + 64)
}

// noteSize records that n entries took bytes to encode, for sizeFor.
func (t *Table[K, V]) noteSize(n, bytes int) { notePer(&t.perEntry, n, bytes) }

// notePer stores in per the bytes per entry, times 256, of n entries
// that took bytes to encode.
func notePer(per *atomic.Int64, n, bytes int) {
	if n > 0 {
		per.Store(int64(bytes) * 256 / int64(n))
	}
}

// encode appends the entries of shards to dst, key group by key group.
// When the entries take more than dst's room, the buffer grows to hold
// the shards left at the bytes per entry so far, and at least doubles:
// append's own growth of a large slice (a quarter at a time) would copy
// a large snapshot several times.
func (t *Table[K, V]) encode(dst []byte, shards []map[K]V) []byte {
	start, done, left := len(dst), 0, 0
	for _, m := range shards {
		left += len(m)
	}
	for s, m := range shards {
		kg := 0
		if t.sharded {
			kg = t.b.kgStart + s
		}
		if done > 0 {
			need := (len(dst) - start) / done * len(m)
			if cap(dst)-len(dst) < need {
				dst = slices.Grow(dst, max((len(dst)-start)/done*left, len(dst)))
			}
		}
		for k, v := range m {
			dst = t.appendEntry(dst, kg, k, v)
		}
		done += len(m)
		left -= len(m)
	}
	return dst
}

// appendEntry appends the entry k=v of key group kg as a snapshot holds
// it.
func (t *Table[K, V]) appendEntry(dst []byte, kg int, k K, v V) []byte {
	dst = binary.AppendUvarint(dst, uint64(kg))
	dst = t.key.Append(dst, k)
	return t.value.Append(dst, v)
}

func (t *Table[K, V]) schema() []byte { return t.schemas }

// restore decodes entries with the codecs key and value, keeping those of
// key groups [start, end) (of those this instance owns). Snapshots hold
// entries key group by key group in ascending order (freeze writes them
// shard by shard, a pebble table's savepoint scans them key group by key
// group), so the key-group check hashes the first key of each run, and
// the entries after the range are not decoded at all: a subtask restored
// at another parallelism reads the snapshots of old subtasks whose key
// groups only partly overlap its own.
func (t *Table[K, V]) restore(data []byte, key codec.Codec[K], value codec.Codec[V], start, end int, delta bool) error {
	checked := -1
	// Decoded through an interface, a local key or value would escape:
	// one of each, reused, saves two allocations per entry.
	kp, vp := new(K), new(V)
	var zk K
	var zv V
	for len(data) > 0 {
		kg, n := binary.Uvarint(data)
		if n <= 0 {
			return fmt.Errorf("bad key group: %w", codec.ErrCorrupt)
		}
		data = data[n:]
		if t.sharded && int(kg) >= end {
			break // the rest is another subtask's
		}
		deleted, patch := false, false
		if delta { // a delta's entry (chain.go)
			if len(data) == 0 || data[0] > deltaPatch {
				return fmt.Errorf("bad delta entry: %w", codec.ErrCorrupt)
			}
			if data[0] == deltaPatch && t.entries == nil {
				return fmt.Errorf("a delta of map entries for a table of whole values: %w", codec.ErrCorrupt)
			}
			deleted, patch, data = data[0] == deltaDelete, data[0] == deltaPatch, data[1:]
		}
		*kp = zk
		n, err := key.Decode(data, kp)
		if err != nil {
			return fmt.Errorf("key: %w", err)
		}
		data = data[n:]
		if !deleted {
			*vp = zv
			n, err = value.Decode(data, vp)
			if err != nil {
				return fmt.Errorf("value: %w", err)
			}
			data = data[n:]
		}
		var removed V
		if patch {
			if n, err = value.Decode(data, &removed); err != nil {
				return fmt.Errorf("removed entries: %w", err)
			}
			data = data[n:]
		}
		k, v := *kp, *vp
		if !t.sharded {
			t.apply(0, k, v, deleted, patch, removed)
			continue
		}
		if int(kg) < start || int(kg) >= end {
			continue // another subtask's key group
		}
		if t.keyGroup != nil && int(kg) != checked {
			if got := t.keyGroup(k); got != int(kg) {
				return fmt.Errorf("key stored in key group %d hashes to %d; the key hash or max parallelism changed", kg, got)
			}
			checked = int(kg)
		}
		t.apply(int(kg)-t.b.kgStart, k, v, deleted, patch, removed)
	}
	return nil
}

// apply sets or deletes a restored entry, or applies a delta's patch of
// a map's entries (v its entries set, removed those removed).
func (t *Table[K, V]) apply(s int, k K, v V, deleted, patch bool, removed V) {
	if patch {
		old, had := t.shards[s][k]
		m, ok := t.entries.merge(old, had, v, removed)
		if !ok {
			delete(t.shards[s], k)
			return
		}
		t.shards[s][k] = m
		return
	}
	if deleted {
		delete(t.shards[s], k)
		return
	}
	t.shards[s][k] = v
}

// inStore returns the table's part in an LSM store, nil when it has none.
func (t *Table[K, V]) inStore() lsmTable {
	if t.l == nil {
		return nil
	}
	return t.l
}
