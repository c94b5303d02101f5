package state

import (
	"encoding/binary"
	"fmt"

	"github.com/weir-stream/weir/codec"
)

// MapCodec encodes a map as a count followed by its entries in iteration
// order. Unlike codec.For's map codec it does not sort the entries (state
// snapshots need no canonical form), which makes large maps several times
// cheaper to snapshot.
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
