package state

import "fmt"

// MapTable is a table of maps written entry by entry: MapState's storage.
// Its incremental snapshots' deltas hold the entries of each key's map
// written since the snapshot before, not the whole map: a join that keeps
// every row of a key in one map would otherwise write each changed key's
// whole map again at every checkpoint, and copy it on its next write
// (whole values are shared with the delta's encoding). A delta holds a
// key's whole map still when the key was written whole (Table's Put,
// PutNew, Delete or GetMutable, or its last entry removed), or when its
// entries were written more often than it has entries.
//
// The entries a delta holds are copied at the snapshot, synchronously:
// the map itself is not shared with the encoding, so it is not copied on
// its next write. The entries' values are shared, as a whole map's are:
// a value type whose values change in place is encoded at once (InPlace).
type MapTable[K, UK comparable, UV any] struct {
	t *Table[K, map[UK]UV]
	// log holds per shard the keys whose entries were written one by one
	// since the last snapshot, with those entries' keys; a nil value marks
	// a key written whole (it is in t.dirty). Kept only while the table's
	// snapshots chain, as t.dirty is.
	log []map[K]*written[UK]
}

// written are the keys of a map's entries written one by one, in the
// order written, repeats included.
type written[UK comparable] struct{ uks []UK }

// RegisterMap is Register for a table of maps written entry by entry
// (MapTable). o.Value must be the MapCodec of the map's entries (or
// another whose encoding of a map holds its entries only), and o.Clone
// copies a map for GetMutable.
func RegisterMap[K, UK comparable, UV any](b *Backend, name string, o TableOptions[K, map[UK]UV]) (*MapTable[K, UK, UV], error) {
	m := &MapTable[K, UK, UV]{}
	o.entries = m
	t, err := Register(b, name, o)
	if err != nil {
		return nil, err
	}
	if t.entries == nil {
		return nil, fmt.Errorf("state %q is already registered as a table of whole values", name)
	}
	if mt, ok := t.entries.(*MapTable[K, UK, UV]); ok && mt != m {
		return mt, nil // registered before
	}
	m.t = t
	m.log = make([]map[K]*written[UK], len(t.shards))
	return m, nil
}

// Table returns the table of whole maps; writes through it mark each
// key's map written whole.
func (m *MapTable[K, UK, UV]) Table() *Table[K, map[UK]UV] { return m.t }

// Get returns the entry uk of k's map in shard s.
func (m *MapTable[K, UK, UV]) Get(s int, k K, uk UK) (UV, bool) {
	mp, _ := m.t.Get(s, k)
	v, ok := mp[uk]
	return v, ok
}

// Put sets the entry uk of k's map in shard s.
func (m *MapTable[K, UK, UV]) Put(s int, k K, uk UK, uv UV) {
	mp, ok := m.t.getMutable(s, k, false)
	if !ok {
		m.t.PutNew(s, k, map[UK]UV{uk: uv})
		return
	}
	mp[uk] = uv
	m.wrote(s, k, uk, len(mp))
}

// Compute sets the entry uk of k's map in shard s to f's result, given
// the entry's value now (ok: it has one). It finds k's map once, where a
// Get and then a Put find it twice. f must not use the table.
func (m *MapTable[K, UK, UV]) Compute(s int, k K, uk UK, f func(old UV, ok bool) UV) {
	mp, ok := m.t.getMutable(s, k, false)
	if !ok {
		var zero UV
		m.t.PutNew(s, k, map[UK]UV{uk: f(zero, false)})
		return
	}
	old, had := mp[uk]
	mp[uk] = f(old, had)
	m.wrote(s, k, uk, len(mp))
}

// Remove removes the entry uk of k's map in shard s, and k once its map
// is empty.
func (m *MapTable[K, UK, UV]) Remove(s int, k K, uk UK) {
	mp, ok := m.t.Get(s, k)
	if !ok {
		return
	}
	if _, ok := mp[uk]; !ok {
		return
	}
	if len(mp) == 1 {
		m.t.Delete(s, k)
		return
	}
	mp, _ = m.t.getMutable(s, k, false)
	delete(mp, uk)
	m.wrote(s, k, uk, len(mp))
}

// All calls f for the entries of k's map in shard s until f returns
// false; f must not change the map.
func (m *MapTable[K, UK, UV]) All(s int, k K, f func(UK, UV) bool) {
	mp, _ := m.t.Get(s, k)
	for uk, uv := range mp {
		if !f(uk, uv) {
			return
		}
	}
}

// Len returns the number of entries of k's map in shard s.
func (m *MapTable[K, UK, UV]) Len(s int, k K) int {
	mp, _ := m.t.Get(s, k)
	return len(mp)
}

// Delete removes k's map from shard s.
func (m *MapTable[K, UK, UV]) Delete(s int, k K) { m.t.Delete(s, k) }

// wrote records that the entry uk of k's map (of n entries now) in shard
// s was written, for the next delta. A table in an LSM store, whose
// snapshots never chain, logs nothing: its store tracks what it wrote.
func (m *MapTable[K, UK, UV]) wrote(s int, k K, uk UK, n int) {
	if len(m.t.chain) == 0 {
		return
	}
	lg := m.logOf(s)
	w, ok := lg[k]
	switch {
	case ok && w == nil:
		return // written whole
	case !ok:
		w = &written[UK]{}
		lg[k] = w
	case len(w.uks) > 2*n+8:
		// Its entries were written more often than it has them: the
		// whole map is the smaller delta.
		m.t.mark(s, k)
		return
	}
	w.uks = append(w.uks, uk)
}

// whole records that k of shard s was written whole; see entryLog.
func (m *MapTable[K, UK, UV]) whole(s int, k K) {
	if m.log == nil {
		return // still registering: nothing is logged yet
	}
	m.logOf(s)[k] = nil
}

// logOf returns shard s's log, creating it.
func (m *MapTable[K, UK, UV]) logOf(s int) map[K]*written[UK] {
	if m.log[s] == nil {
		m.log[s] = map[K]*written[UK]{}
	}
	return m.log[s]
}

// patches calls f for each key of shard s whose entries were written one
// by one since the last snapshot, with those entries: in puts those in
// the map now, with their values, in removed those no longer in it (zero
// values; nil when none). A key with no map (which was then deleted
// whole) has all its written entries removed.
func (m *MapTable[K, UK, UV]) patches(s int, f func(k K, puts, removed map[UK]UV)) {
	if m.log == nil {
		return
	}
	for k, w := range m.log[s] {
		if w == nil {
			continue
		}
		mp := m.t.shards[s][k]
		puts := make(map[UK]UV, len(w.uks))
		var removed map[UK]UV
		for _, uk := range w.uks {
			if v, ok := mp[uk]; ok {
				puts[uk] = v
				continue
			}
			if removed == nil {
				removed = map[UK]UV{}
			}
			var zero UV
			removed[uk] = zero
		}
		f(k, puts, removed)
	}
}

// reset forgets what was written: a snapshot holds it.
func (m *MapTable[K, UK, UV]) reset() {
	for s := range m.log {
		m.log[s] = nil
	}
}

// merge returns k's map old (had: k had one) with a delta's puts and
// removed applied; ok is false when no entry is left. old is the
// restoring table's own, changed in place.
func (m *MapTable[K, UK, UV]) merge(old map[UK]UV, had bool, puts, removed map[UK]UV) (map[UK]UV, bool) {
	if !had || old == nil {
		old = make(map[UK]UV, len(puts))
	}
	for uk, v := range puts {
		old[uk] = v
	}
	for uk := range removed {
		delete(old, uk)
	}
	return old, len(old) > 0
}

// entryLog is what a table of maps written entry by entry (MapTable)
// adds to the table's incremental snapshots; V is the map type. Every
// method runs on the table's owner goroutine.
type entryLog[K comparable, V any] interface {
	// whole records that k of shard s was written whole.
	whole(s int, k K)
	// patches calls f for each key of shard s whose entries were written
	// one by one since the last snapshot, and not it whole, with those
	// entries.
	patches(s int, f func(k K, puts, removed V))
	// reset forgets what was written.
	reset()
	// merge applies a delta's entries to k's restored map old.
	merge(old V, had bool, puts, removed V) (V, bool)
}
