package state

import (
	"fmt"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/state/lsm"
)

// tableLSM is what a Table in an LSM store keeps beside its shard maps,
// which then cache decoded entries (lsmstate.go): per shard, the keys
// changed and the keys deleted since the last write-through.
type tableLSM[K comparable, V any] struct {
	t     *Table[K, V]
	id    uint32
	dirty []map[K]struct{}
	gone  []map[K]struct{}
	kbuf  []byte
	vbuf  []byte
}

// inLSM moves t into b's store: called by Register for a keyed table of
// an LSM backend, after b.Open. Restored entries of the memory format
// (chunks) are written into the store; entries in the store written under
// another value schema are rewritten under the current one.
func (t *Table[K, V]) inLSM(written partSchema, cs []chunk) error {
	l := t.b.lsm
	id, err := l.tableID(t.name)
	if err != nil {
		return err
	}
	x := &tableLSM[K, V]{t: t, id: id, dirty: make([]map[K]struct{}, len(t.shards)), gone: make([]map[K]struct{}, len(t.shards))}
	for i := range x.dirty {
		x.dirty[i], x.gone[i] = map[K]struct{}{}, map[K]struct{}{}
	}
	t.l = x
	if err := l.recordName(id, t.name); err != nil {
		return err
	}
	kc, vc, err := readers(t.key, t.value, written)
	if err != nil {
		return err
	}
	if len(cs) > 0 {
		for _, c := range cs {
			if err := t.restoreChunk(c, kc, vc); err != nil {
				return err
			}
		}
		for s, m := range t.shards {
			for k := range m {
				x.dirty[s][k] = struct{}{}
			}
		}
		l.tables = append(l.tables, x)
		if err := t.b.writeThrough(); err != nil {
			return err
		}
		x.evict()
		return nil
	}
	l.tables = append(l.tables, x)
	if vc != t.value {
		return x.migrate(vc)
	}
	return nil
}

// migrate rewrites every entry of the table in the store, read with old,
// under the table's value codec.
func (x *tableLSM[K, V]) migrate(old codec.Codec[V]) error {
	st := x.t.b.lsm.store
	v := st.View()
	defer v.Close()
	b := st.NewBatch()
	defer b.Close()
	vp := new(V)
	var zero V
	err := scanTable(v, x.id, x.t.b.kgStart, x.t.b.kgEnd, func(kg int, key, value []byte) error {
		*vp = zero
		if _, err := old.Decode(value, vp); err != nil {
			return fmt.Errorf("value: %w", err)
		}
		k := lsm.AppendKey(nil, kg, x.id)
		b.Set(append(k, key...), x.t.value.Append(nil, *vp))
		if b.Len() >= 4<<20 {
			return b.Commit()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return b.Commit()
}

// storeKey returns the store's key of k in shard s, in a buffer reused
// by the next call.
func (x *tableLSM[K, V]) storeKey(s int, k K) []byte {
	x.kbuf = lsm.AppendKey(x.kbuf[:0], x.t.kg(s), x.id)
	x.kbuf = x.t.key.Append(x.kbuf, k)
	return x.kbuf
}

// get returns k's value in shard s, from the cache or else the store,
// caching what it loads.
func (x *tableLSM[K, V]) get(s int, k K) (V, bool) {
	t := x.t
	if v, ok := t.shards[s][k]; ok {
		return v, true
	}
	var v V
	if _, del := x.gone[s][k]; del {
		return v, false
	}
	found, err := t.b.lsm.store.Get(x.storeKey(s, k), func(data []byte) error {
		_, err := t.value.Decode(data, &v)
		return err
	})
	if err != nil {
		panic(fmt.Errorf("state %q: reading the store: %w", t.name, err))
	}
	if found {
		t.shards[s][k] = v
		t.b.lsm.cached++
	}
	return v, found
}

func (x *tableLSM[K, V]) put(s int, k K, v V) {
	m := x.t.shards[s]
	if _, ok := m[k]; !ok {
		x.t.b.lsm.cached++
	}
	m[k] = v
	x.dirty[s][k] = struct{}{}
	delete(x.gone[s], k)
}

// delete removes k; a deletion held for the next write-through counts as
// a cached entry, so that many deletions settle too.
func (x *tableLSM[K, V]) delete(s int, k K) {
	if _, ok := x.t.shards[s][k]; ok {
		delete(x.t.shards[s], k)
		x.t.b.lsm.cached--
	}
	delete(x.dirty[s], k)
	if _, ok := x.gone[s][k]; !ok {
		x.gone[s][k] = struct{}{}
		x.t.b.lsm.cached++
	}
}

func (x *tableLSM[K, V]) writeThrough(b *lsm.Batch) {
	t := x.t
	for s := range t.shards {
		for k := range x.dirty[s] {
			x.vbuf = t.value.Append(x.vbuf[:0], t.shards[s][k])
			b.Set(x.storeKey(s, k), x.vbuf)
		}
		for k := range x.gone[s] {
			b.Delete(x.storeKey(s, k))
		}
		clear(x.dirty[s])
		clear(x.gone[s])
	}
}

func (x *tableLSM[K, V]) evict() {
	for _, m := range x.t.shards {
		clear(m)
	}
}

// all calls f for every entry of shard s, after writing its changes
// through; cached values win over the store's (they are the same but
// for in-place changes of an InPlace table's values).
func (x *tableLSM[K, V]) all(s int, f func(K, V) bool) {
	t := x.t
	if err := t.b.writeThrough(); err != nil {
		panic(fmt.Errorf("state %q: writing to the store: %w", t.name, err))
	}
	lo, hi := lsm.TableRange(t.kg(s), x.id)
	kp, vp := new(K), new(V)
	var zk K
	var zv V
	err := t.b.lsm.store.Scan(lo, hi, func(key, value []byte) (bool, error) {
		*kp = zk
		if _, err := t.key.Decode(key[len(lo):], kp); err != nil {
			return false, err
		}
		if v, ok := t.shards[s][*kp]; ok {
			return f(*kp, v), nil
		}
		*vp = zv
		if _, err := t.value.Decode(value, vp); err != nil {
			return false, err
		}
		return f(*kp, *vp), nil
	})
	if err != nil {
		panic(fmt.Errorf("state %q: reading the store: %w", t.name, err))
	}
}

// len counts the table's entries in the store, after writing its changes
// through.
func (x *tableLSM[K, V]) len() int {
	n := 0
	for s := range x.t.shards {
		x.all(s, func(K, V) bool { n++; return true })
	}
	return n
}

func (x *tableLSM[K, V]) canonical(v *lsm.View) func([]byte) ([]byte, error) {
	b := x.t.b
	return func(dst []byte) ([]byte, error) { return appendCanonical(dst, v, x.id, b.kgStart, b.kgEnd) }
}
