// Package state holds the state of one subtask: keyed tables scoped to the
// key being processed, and event-time and processing-time timers.
//
// Every piece of operator state lives here, behind one Backend per subtask,
// so that checkpoints can snapshot and restore all of it and rescaling can
// move it by key group. The in-memory backend keeps Go values in maps.
package state

import (
	"fmt"
	"sort"

	"github.com/weir-stream/weir/codec"
)

// Backend is the state of one operator instance in one subtask. It is used
// from the subtask's goroutine only.
type Backend struct {
	tables map[string]table
	order  []string
}

type table interface {
	name() string
	len() int
}

// NewBackend returns an empty backend.
func NewBackend() *Backend {
	return &Backend{tables: map[string]table{}}
}

// Names returns the names of the registered tables in registration order.
func (b *Backend) Names() []string { return append([]string(nil), b.order...) }

// Table is a map from keys to values: the storage of keyed state. K is the
// operator's key type (possibly combined with a namespace such as a window).
type Table[K comparable, V any] struct {
	n     string
	m     map[K]V
	key   codec.Codec[K]
	value codec.Codec[V]
	hash  func(K) uint64
}

// Register returns the table named name, creating it on first use. It
// fails when a table of that name exists with other types.
func Register[K comparable, V any](b *Backend, name string, key codec.Codec[K], value codec.Codec[V], hash func(K) uint64) (*Table[K, V], error) {
	if t, ok := b.tables[name]; ok {
		tt, ok := t.(*Table[K, V])
		if !ok {
			return nil, fmt.Errorf("state %q is already registered with other types", name)
		}
		return tt, nil
	}
	t := &Table[K, V]{n: name, m: map[K]V{}, key: key, value: value, hash: hash}
	b.tables[name] = t
	b.order = append(b.order, name)
	sort.Strings(b.order)
	return t, nil
}

func (t *Table[K, V]) name() string { return t.n }
func (t *Table[K, V]) len() int     { return len(t.m) }

// Get returns the value of k.
func (t *Table[K, V]) Get(k K) (V, bool) {
	v, ok := t.m[k]
	return v, ok
}

// Put sets the value of k.
func (t *Table[K, V]) Put(k K, v V) { t.m[k] = v }

// Delete removes k.
func (t *Table[K, V]) Delete(k K) { delete(t.m, k) }

// Len returns the number of keys.
func (t *Table[K, V]) Len() int { return len(t.m) }

// All calls f for every entry until f returns false. The order is
// unspecified; f must not add keys.
func (t *Table[K, V]) All(f func(K, V) bool) {
	for k, v := range t.m {
		if !f(k, v) {
			return
		}
	}
}
