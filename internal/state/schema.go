package state

import (
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/weir-stream/weir/codec"
)

// State schema evolution. A snapshot records, next to each part's section,
// the schemas of the part's keys and values (codec.Schema), in a section
// named schemaPrefix + the part's name. A registration claims it with the
// part's data and reads the data with readers for the recorded schemas:
// the part's own codecs when nothing changed (no cost), converting ones
// when its value type evolved compatibly; an incompatible change fails
// the registration with an error wrapping codec.ErrIncompatible. Keys
// must keep their schema: they decide key groups.
//
// A codec without a schema (a user's own, not codec.Evolvable) records
// none and reads what it reads, as do snapshots written before schemas
// were recorded.

// schemaPrefix starts the name of the section holding the schemas of the
// part named by the rest of the name.
const schemaPrefix = "schema\x00"

// partSchema is what a snapshot records of a part's types: the schemas of
// its keys and values, zero when their codec has none.
type partSchema struct {
	key, value codec.Schema
}

// schemaOf returns c's schema, or the zero Schema for a codec without one.
func schemaOf[T any](c codec.Codec[T]) codec.Schema {
	if e, ok := c.(codec.Evolvable[T]); ok {
		return e.Schema()
	}
	return codec.Schema{}
}

// encode returns the section recording s: the key's and the value's
// schema, each with its length; nil when neither is known.
func (s partSchema) encode() []byte {
	if s.key.IsZero() && s.value.IsZero() {
		return nil
	}
	k, v := s.key.Append(nil), s.value.Append(nil)
	out := binary.AppendUvarint(nil, uint64(len(k)))
	out = append(out, k...)
	out = binary.AppendUvarint(out, uint64(len(v)))
	return append(out, v...)
}

func parsePartSchema(data []byte) (partSchema, error) {
	var s partSchema
	for i, dst := range []*codec.Schema{&s.key, &s.value} {
		l, n := binary.Uvarint(data)
		if n <= 0 || uint64(len(data)-n) < l {
			return partSchema{}, fmt.Errorf("truncated schema: %w", codec.ErrCorrupt)
		}
		var err error
		if *dst, err = codec.ParseSchema(data[n : n+int(l)]); err != nil {
			return partSchema{}, fmt.Errorf("schema of the %s: %w", [...]string{"keys", "values"}[i], err)
		}
		data = data[n+int(l):]
	}
	if len(data) > 0 {
		return partSchema{}, fmt.Errorf("trailing bytes after a schema: %w", codec.ErrCorrupt)
	}
	return s, nil
}

// claimSchema returns and forgets the recorded schemas of the restored
// part name; zero schemas when the snapshot recorded none. Every
// registration claims it, so that a snapshot carries no stale schema.
func (b *Backend) claimSchema(name string) (partSchema, error) {
	cs, ok := b.claim(schemaPrefix + name)
	if !ok {
		return partSchema{}, nil
	}
	return parsePartSchema(cs[0].data)
}

// readerFor returns the codec that reads values c writes that were
// written under w: c itself if w is zero (not recorded) or c has no
// schema.
func readerFor[T any](c codec.Codec[T], w codec.Schema) (codec.Codec[T], error) {
	if e, ok := c.(codec.Evolvable[T]); ok && !w.IsZero() {
		return e.Reader(w)
	}
	return c, nil
}

// checkKeys fails when keys written under w would be read by c under
// another schema: keys decide key groups (their hash is taken over their
// encoding) and identify entries, so they cannot change.
func checkKeys[K any](c codec.Codec[K], w codec.Schema) error {
	now := schemaOf(c)
	if w.IsZero() || now.IsZero() || now.Equal(w) {
		return nil
	}
	return fmt.Errorf("the keys changed from %v to %v (%v), but keys decide key groups and must keep their type: %w",
		w, now, reflect.TypeFor[K](), codec.ErrIncompatible)
}

// readers returns the codecs that read a part's restored keys and values
// recorded under w.
func readers[K, V any](key codec.Codec[K], value codec.Codec[V], w partSchema) (codec.Codec[K], codec.Codec[V], error) {
	if err := checkKeys(key, w.key); err != nil {
		return nil, nil, err
	}
	vc, err := readerFor(value, w.value)
	if err != nil {
		return nil, nil, fmt.Errorf("its values changed: %w", err)
	}
	return key, vc, nil
}
