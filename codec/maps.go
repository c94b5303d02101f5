package codec

import (
	"bytes"
	"reflect"
	"slices"
	"strconv"
	"unsafe"
)

// Maps are encoded as an entry count followed by key/value pairs sorted by
// the bytes of the encoded key, and, for the rare keys whose encodings are
// equal although the keys are not (NaN floats), by the bytes of the encoded
// value. The decoder insists on that order and rejects duplicate keys, so
// every map has exactly one encoding.

// mapEntry locates one encoded entry in a scratch buffer:
// key is buf[k:v], value is buf[v:end].
type mapEntry struct{ k, v, end int }

func appendMap(dst []byte, pl *plan, p unsafe.Pointer) []byte {
	// Interface copies the map pointer out of *p, so that the reflect
	// values and iterator below, which may live on the heap, never point
	// into the memory at p (which can be a noescape'd stack slot).
	m := reflect.ValueOf(reflect.NewAt(pl.typ, p).Elem().Interface())
	n := m.Len()
	dst = appendUvarint(dst, uint64(n))
	if n == 0 {
		return dst
	}
	kp, vp := reflect.New(pl.key.typ), reflect.New(pl.elem.typ)
	k, v := kp.Elem(), vp.Elem()
	kptr, vptr := kp.UnsafePointer(), vp.UnsafePointer()
	it := m.MapRange()
	if n == 1 {
		it.Next()
		k.SetIterKey(it)
		v.SetIterValue(it)
		dst = appendOp(dst, pl.key, kptr)
		return appendOp(dst, pl.elem, vptr)
	}
	var buf []byte
	entries := make([]mapEntry, 0, n)
	for it.Next() {
		k.SetIterKey(it)
		v.SetIterValue(it)
		e := mapEntry{k: len(buf)}
		buf = appendOp(buf, pl.key, kptr)
		e.v = len(buf)
		buf = appendOp(buf, pl.elem, vptr)
		e.end = len(buf)
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b mapEntry) int {
		if c := bytes.Compare(buf[a.k:a.v], buf[b.k:b.v]); c != 0 {
			return c
		}
		return bytes.Compare(buf[a.v:a.end], buf[b.v:b.end])
	})
	dst = slices.Grow(dst, len(buf))
	for _, e := range entries {
		dst = append(dst, buf[e.k:e.end]...)
	}
	return dst
}

func decodeMap(src []byte, pl *plan, p unsafe.Pointer) (int, error) {
	count, off, err := readCount(src, pl, pl.key.min+pl.elem.min)
	if err != nil {
		return 0, err
	}
	if count == 0 {
		*(*unsafe.Pointer)(p) = nil
		return off, nil
	}
	// Bound the size hint by the input, in case keys and values are
	// zero-size types (then all but one entry are duplicates).
	m := reflect.MakeMapWithSize(pl.typ, min(count, len(src)))
	kp, vp := reflect.New(pl.key.typ), reflect.New(pl.elem.typ)
	k, v := kp.Elem(), vp.Elem()
	kptr, vptr := kp.UnsafePointer(), vp.UnsafePointer()
	var prevKey, prevVal []byte
	for i := range count {
		kn, err := decodeOp(src[off:], pl.key, kptr)
		if err != nil {
			return 0, withPath(err, "[key "+strconv.Itoa(i)+"]")
		}
		key := src[off : off+kn]
		off += kn
		vn, err := decodeOp(src[off:], pl.elem, vptr)
		if err != nil {
			return 0, withPath(err, "[value "+strconv.Itoa(i)+"]")
		}
		val := src[off : off+vn]
		off += vn
		if i > 0 {
			c := bytes.Compare(prevKey, key)
			if c > 0 || c == 0 && bytes.Compare(prevVal, val) > 0 {
				return 0, corrupt(pl.typ.String(), "map entries out of order")
			}
		}
		before := m.Len()
		m.SetMapIndex(k, v)
		if m.Len() == before {
			return 0, corrupt(pl.typ.String(), "duplicate map key")
		}
		prevKey, prevVal = key, val
	}
	*(*unsafe.Pointer)(p) = m.UnsafePointer()
	return off, nil
}
