package state

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/weir-stream/weir/codec"
)

// Dense is a map from keys to values kept as two parallel slices, the
// keys in the order they were added and their values, with an index from
// key to position. Entries are added or changed, never removed: a Dense
// is dropped whole (a window's bucket when the window fires).
//
// Walking a Dense walks its slices, several times faster than iterating a
// Go map, which is what a snapshot's encoding and a window's firing do;
// and Clone, the copy a table makes on the first write after a snapshot,
// copies only the values.
type Dense[K comparable, V any] struct {
	index map[K]int32
	keys  []K
	vals  []V
}

// NewDense returns an empty Dense with room for n entries.
func NewDense[K comparable, V any](n int) *Dense[K, V] {
	return &Dense[K, V]{index: make(map[K]int32, n), keys: make([]K, 0, n), vals: make([]V, 0, n)}
}

// Len returns the number of entries; a nil Dense has none.
func (d *Dense[K, V]) Len() int {
	if d == nil {
		return 0
	}
	return len(d.keys)
}

// Slot returns the position of k, if d holds it.
func (d *Dense[K, V]) Slot(k K) (int, bool) {
	i, ok := d.index[k]
	return int(i), ok
}

// Get returns the value of k, if d holds it.
func (d *Dense[K, V]) Get(k K) (V, bool) {
	if i, ok := d.index[k]; ok {
		return d.vals[i], true
	}
	var zero V
	return zero, false
}

// Add appends k, which d must not hold, with v, and returns its position.
func (d *Dense[K, V]) Add(k K, v V) int {
	i := len(d.keys)
	if i == math.MaxInt32 {
		panic("state: a Dense holds at most 2^31-1 entries")
	}
	d.index[k] = int32(i)
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
	return i
}

// Key returns the key at position i.
func (d *Dense[K, V]) Key(i int) K { return d.keys[i] }

// Value returns the value at position i.
func (d *Dense[K, V]) Value(i int) V { return d.vals[i] }

// Set changes the value at position i.
func (d *Dense[K, V]) Set(i int, v V) { d.vals[i] = v }

// put sets k's value, adding k if d does not hold it.
func (d *Dense[K, V]) put(k K, v V) {
	if i, ok := d.index[k]; ok {
		d.vals[i] = v
		return
	}
	d.Add(k, v)
}

// Clone returns a Dense with d's entries for the caller to change, as a
// table's Clone: it copies the values (shallowly) and shares the keys and
// the index, which are only ever appended to. Afterwards d must not be
// changed, and only its Len, Key and Value may be called — they see d's
// entries as they were, also while the clone changes, from another
// goroutine (a snapshot's encoding) — not Slot or Get, whose index the
// clone changes.
func (d *Dense[K, V]) Clone() *Dense[K, V] {
	return &Dense[K, V]{index: d.index, keys: d.keys[:len(d.keys):len(d.keys)], vals: slices.Clone(d.vals)}
}

// DenseCodec encodes a Dense as MapCodec encodes a map, in the same
// format and under the same schema: a count, then the entries in the
// order they were added. Snapshots of either read as the other.
func DenseCodec[K comparable, V any](key codec.Codec[K], value codec.Codec[V]) codec.Codec[*Dense[K, V]] {
	return denseCodec[K, V]{mapCodec[K, V]{key, value}}
}

type denseCodec[K comparable, V any] struct{ m mapCodec[K, V] }

func (c denseCodec[K, V]) Append(dst []byte, d *Dense[K, V]) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(d.keys)))
	for i, k := range d.keys {
		dst = c.m.key.Append(dst, k)
		dst = c.m.value.Append(dst, d.vals[i])
	}
	return dst
}

func (c denseCodec[K, V]) Decode(src []byte, d **Dense[K, V]) (int, error) {
	var out *Dense[K, V]
	off, err := decodeEntries(src, c.m.key, c.m.value, func(n int) { out = NewDense[K, V](n) }, func(k K, v V) { out.put(k, v) })
	if err != nil {
		return 0, err
	}
	*d = out
	return off, nil
}

func (c denseCodec[K, V]) Schema() codec.Schema { return c.m.Schema() }

func (c denseCodec[K, V]) Reader(w codec.Schema) (codec.Codec[*Dense[K, V]], error) {
	r, err := c.m.Reader(w)
	if err != nil {
		return nil, err
	}
	m, ok := r.(mapCodec[K, V])
	if !ok {
		return nil, fmt.Errorf("state: reader of a dense map: %T", r)
	}
	return denseCodec[K, V]{m}, nil
}
