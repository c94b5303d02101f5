package state

import (
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/weir-stream/weir/codec"
)

// MapCodec encodes a map as a count followed by its entries in iteration
// order. Unlike codec.For's map codec it does not sort the entries (state
// snapshots need no canonical form), which makes large maps several times
// cheaper to snapshot. Its schema is codec.For's for the same map type,
// with a key or value codec without a schema (not codec.Evolvable)
// standing for a self-encoding type; it reads maps written under an
// earlier schema through the key's and value's Readers.
func MapCodec[K comparable, V any](key codec.Codec[K], value codec.Codec[V]) codec.Codec[map[K]V] {
	return mapCodec[K, V]{key, value}
}

type mapCodec[K comparable, V any] struct {
	key   codec.Codec[K]
	value codec.Codec[V]
}

func (c mapCodec[K, V]) Append(dst []byte, m map[K]V) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(m)))
	for k, v := range m {
		dst = c.key.Append(dst, k)
		dst = c.value.Append(dst, v)
	}
	return dst
}

func (c mapCodec[K, V]) Decode(src []byte, m *map[K]V) (int, error) {
	n, off := binary.Uvarint(src)
	if off <= 0 || n > uint64(len(src)) {
		return 0, fmt.Errorf("state: map length: %w", codec.ErrCorrupt)
	}
	out := make(map[K]V, n)
	// Decoded through an interface, a local key or value would escape:
	// one of each, reused, saves two allocations per entry.
	kp, vp := new(K), new(V)
	var zk K
	var zv V
	for range n {
		*kp = zk
		w, err := c.key.Decode(src[off:], kp)
		if err != nil {
			return 0, err
		}
		off += w
		*vp = zv
		w, err = c.value.Decode(src[off:], vp)
		if err != nil {
			return 0, err
		}
		off += w
		out[*kp] = *vp
	}
	*m = out
	return off, nil
}

func (c mapCodec[K, V]) Schema() codec.Schema {
	return codec.MapSchema(schemaOf(c.key), schemaOf(c.value))
}

func (c mapCodec[K, V]) Reader(w codec.Schema) (codec.Codec[map[K]V], error) {
	if w.IsZero() || w.Equal(c.Schema()) {
		return c, nil
	}
	wk, wv, ok := w.MapParts()
	if !ok {
		return nil, &codec.SchemaError{Path: reflect.TypeFor[map[K]V]().String(), Was: w.String(), Now: reflect.TypeFor[map[K]V]().String()}
	}
	kc, err := readerFor(c.key, wk)
	if err != nil {
		return nil, err
	}
	vc, err := readerFor(c.value, wv)
	if err != nil {
		return nil, err
	}
	return mapCodec[K, V]{kc, vc}, nil
}
