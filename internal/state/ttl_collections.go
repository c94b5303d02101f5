package state

import "slices"

// TTLLists is a table of lists whose elements each have a time-to-live
// (as Flink's list state with TTL), over a table of StampedList.
//
// The table's slices are appended to, never changed below their length,
// except for the stamps that a read refreshes (OnRead) through
// GetMutable: register the table with CloneStampedList.
type TTLLists[K comparable, V any] struct {
	ttlTable[K, StampedList[V]]
}

// CloneStampedList is the Clone of a table of StampedList: it copies the
// stamps, which reads refresh in place, and shares the values.
func CloneStampedList[V any](l StampedList[V]) StampedList[V] {
	l.Stamps = slices.Clone(l.Stamps)
	return l
}

// NewTTLLists returns the lists of t with the time-to-live ttl.
func NewTTLLists[K comparable, V any](t *Table[K, StampedList[V]], ttl TTL) *TTLLists[K, V] {
	return &TTLLists[K, V]{newTTLTable(t, ttl, func(l StampedList[V], now int64) (StampedList[V], verdict) {
		live := 0
		for _, st := range l.Stamps {
			if !ttl.expired(st, now) {
				live++
			}
		}
		switch live {
		case len(l.Stamps):
			return l, keep
		case 0:
			return l, drop
		}
		p := StampedList[V]{Values: make([]V, 0, live), Stamps: make([]int64, 0, live)}
		for i, st := range l.Stamps {
			if !ttl.expired(st, now) {
				p.Values = append(p.Values, l.Values[i])
				p.Stamps = append(p.Stamps, st)
			}
		}
		return p, rewrite
	})}
}

// Get returns the elements of k's list in shard s that have not expired;
// with OnRead the read restarts their time-to-live. The caller must not
// change the list (append to it, set or reorder its elements).
func (t *TTLLists[K, V]) Get(s int, k K) []V {
	now := t.access()
	l, ok := t.live(s, k, now)
	if !ok {
		return nil
	}
	if t.ttl.OnRead && slices.ContainsFunc(l.Stamps, func(st int64) bool { return st != now }) {
		l, _ = t.t.GetMutable(s, k)
		for i := range l.Stamps {
			l.Stamps[i] = now
		}
	}
	return l.Values
}

// Add appends v to k's list in shard s.
func (t *TTLLists[K, V]) Add(s int, k K, v V) {
	now := t.access()
	l, _ := t.t.Get(s, k)
	t.t.Put(s, k, StampedList[V]{Values: append(l.Values, v), Stamps: append(l.Stamps, now)})
}

// Update replaces k's list in shard s with a copy of vs, which must not be
// empty.
func (t *TTLLists[K, V]) Update(s int, k K, vs []V) {
	now := t.access()
	stamps := make([]int64, len(vs))
	for i := range stamps {
		stamps[i] = now
	}
	t.t.PutNew(s, k, StampedList[V]{Values: slices.Clone(vs), Stamps: stamps})
}

// Delete removes k's list from shard s.
func (t *TTLLists[K, V]) Delete(s int, k K) {
	t.access()
	t.t.Delete(s, k)
}

// TTLMaps is a table of maps whose entries each have a time-to-live (as
// Flink's map state with TTL: per user key), over a table of maps of
// Stamped values. Register the table with maps.Clone as its Clone.
type TTLMaps[K, UK comparable, UV any] struct {
	ttlTable[K, map[UK]Stamped[UV]]
}

// NewTTLMaps returns the maps of t with the time-to-live ttl.
func NewTTLMaps[K, UK comparable, UV any](t *Table[K, map[UK]Stamped[UV]], ttl TTL) *TTLMaps[K, UK, UV] {
	return &TTLMaps[K, UK, UV]{newTTLTable(t, ttl, func(m map[UK]Stamped[UV], now int64) (map[UK]Stamped[UV], verdict) {
		live := 0
		for _, e := range m {
			if !ttl.expired(e.Stamp, now) {
				live++
			}
		}
		switch live {
		case len(m):
			return m, keep
		case 0:
			return m, drop
		}
		p := make(map[UK]Stamped[UV], live)
		for uk, e := range m {
			if !ttl.expired(e.Stamp, now) {
				p[uk] = e
			}
		}
		return p, rewrite
	})}
}

// Get returns the entry uk of k's map in shard s unless it expired; with
// OnRead the read restarts its time-to-live.
func (t *TTLMaps[K, UK, UV]) Get(s int, k K, uk UK) (UV, bool) {
	now := t.access()
	m, _ := t.t.Get(s, k)
	e, ok := m[uk]
	switch {
	case !ok:
		var zero UV
		return zero, false
	case t.ttl.expired(e.Stamp, now):
		t.remove(s, k, uk)
		var zero UV
		return zero, false
	case t.ttl.OnRead && e.Stamp != now:
		m, _ = t.t.GetMutable(s, k)
		m[uk] = Stamped[UV]{e.Value, now}
	}
	return e.Value, true
}

// Put sets the entry uk of k's map in shard s, which then lives for the
// TTL.
func (t *TTLMaps[K, UK, UV]) Put(s int, k K, uk UK, uv UV) {
	now := t.access()
	m, ok := t.t.GetMutable(s, k)
	if !ok {
		m = map[UK]Stamped[UV]{}
		t.t.PutNew(s, k, m)
	}
	m[uk] = Stamped[UV]{uv, now}
}

// Compute sets the entry uk of k's map in shard s to f's result, given
// the entry's value now (ok: it has one that has not expired); the entry
// then lives for the TTL. f must not use the table.
func (t *TTLMaps[K, UK, UV]) Compute(s int, k K, uk UK, f func(old UV, ok bool) UV) {
	now := t.access()
	m, ok := t.t.GetMutable(s, k)
	if !ok {
		var zero UV
		t.t.PutNew(s, k, map[UK]Stamped[UV]{uk: {f(zero, false), now}})
		return
	}
	e, had := m[uk]
	if had && t.ttl.expired(e.Stamp, now) {
		had, e.Value = false, *new(UV)
	}
	m[uk] = Stamped[UV]{f(e.Value, had), now}
}

// Remove removes the entry uk of k's map in shard s.
func (t *TTLMaps[K, UK, UV]) Remove(s int, k K, uk UK) {
	t.access()
	t.remove(s, k, uk)
}

// remove removes the entry uk, and k when its map is left empty.
func (t *TTLMaps[K, UK, UV]) remove(s int, k K, uk UK) { DeleteMapEntry(t.t, s, k, uk) }

// DeleteMapEntry removes the entry uk of k's map in shard s of a table of
// maps, and k when its map is left empty.
func DeleteMapEntry[K, UK comparable, UV any](t *Table[K, map[UK]UV], s int, k K, uk UK) {
	m, ok := t.GetMutable(s, k)
	if !ok {
		return
	}
	delete(m, uk)
	if len(m) == 0 {
		t.Delete(s, k)
	}
}

// All calls f for every entry of k's map in shard s that has not expired,
// until f returns false; with OnRead each entry f sees restarts its
// time-to-live. f must not change the map.
func (t *TTLMaps[K, UK, UV]) All(s int, k K, f func(UK, UV) bool) {
	now := t.access()
	m, ok := t.live(s, k, now)
	if !ok {
		return
	}
	if t.ttl.OnRead {
		m, _ = t.t.GetMutable(s, k)
	}
	for uk, e := range m {
		if t.ttl.OnRead && e.Stamp != now {
			m[uk] = Stamped[UV]{e.Value, now} // an existing key: the range goes on as it was
		}
		if !f(uk, e.Value) {
			return
		}
	}
}

// Len returns the number of entries of k's map in shard s that have not
// expired. It visits them all.
func (t *TTLMaps[K, UK, UV]) Len(s int, k K) int {
	m, _ := t.live(s, k, t.access())
	return len(m)
}

// Delete removes k's map from shard s.
func (t *TTLMaps[K, UK, UV]) Delete(s int, k K) {
	t.access()
	t.t.Delete(s, k)
}
