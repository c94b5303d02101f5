package weir

import (
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/state"
)

// The storage of the state handles: a plain table of the operator's keyed
// state, or, under StateTTL, the state package's table with a
// time-to-live (TTLValues, TTLLists, TTLMaps) over a table of the values
// with their stamps. Every access names the current key's shard.

// valueTable keeps the values of ValueState, ReducingState and
// AggregatingState: a *state.Table or a *state.TTLValues.
type valueTable[K comparable, V any] interface {
	Get(s int, k K) (V, bool)
	Put(s int, k K, v V)
	Delete(s int, k K)
}

// listTable keeps the lists of ListState.
type listTable[K comparable, V any] interface {
	// Get returns k's list, which the caller must not change.
	Get(s int, k K) []V
	Add(s int, k K, v V)
	// Update replaces k's list with a copy of l, which is not empty.
	Update(s int, k K, l []V)
	Delete(s int, k K)
}

// mapTable keeps the maps of MapState.
type mapTable[K, UK comparable, UV any] interface {
	Get(s int, k K, uk UK) (UV, bool)
	Put(s int, k K, uk UK, uv UV)
	// Compute sets the entry uk to f's result, given its value now.
	Compute(s int, k K, uk UK, f func(old UV, ok bool) UV)
	// Remove removes the entry uk, and k once its map is empty.
	Remove(s int, k K, uk UK)
	// All calls f for k's entries until f returns false; f must not
	// change the map.
	All(s int, k K, f func(UK, UV) bool)
	Len(s int, k K) int
	Delete(s int, k K)
}

// The tables are registered with inPlace set when the user's function
// may change what it reads from them in place (state.Mutable of the type
// it sees): see state.TableOptions.InPlace.

func newValueTable[V any, K comparable](sc *StateContext[K], name string, opts []StateOption) valueTable[K, V] {
	if ttl, ok := ttlOf(sc, name, opts); ok {
		t, err := keyed.RegisterTTL[state.Stamped[V]](sc.core, name, nil, state.Mutable[V]())
		sc.setErr(err)
		return state.NewTTLValues(t, ttl)
	}
	t, err := keyed.Register[V](sc.core, name, nil, state.Mutable[V]())
	sc.setErr(err)
	return t
}

func newListTable[V any, K comparable](sc *StateContext[K], name string, opts []StateOption) listTable[K, V] {
	if ttl, ok := ttlOf(sc, name, opts); ok {
		t, err := keyed.RegisterTTL[state.StampedList[V]](sc.core, name, state.CloneStampedList[V], state.Mutable[V]())
		sc.setErr(err)
		return state.NewTTLLists(t, ttl)
	}
	t, err := keyed.Register[[]V](sc.core, name, nil, state.Mutable[V]())
	sc.setErr(err)
	return plainLists[K, V]{t}
}

func newMapTable[UK comparable, UV any, K comparable](sc *StateContext[K], name string, opts []StateOption) mapTable[K, UK, UV] {
	inPlace := state.Mutable[UK]() || state.Mutable[UV]()
	if ttl, ok := ttlOf(sc, name, opts); ok {
		t, err := keyed.RegisterTTLMap[UK, UV](sc.core, name, inPlace)
		sc.setErr(err)
		return state.NewTTLMaps(t, ttl)
	}
	t, err := keyed.RegisterMapState[UK, UV](sc.core, name, inPlace)
	sc.setErr(err) // which fails the operator's open: t is not used
	return t
}

// plainLists is a listTable without a time-to-live. A list is replaced by a
// longer one on Add, never changed in place: a snapshot may hold it.
type plainLists[K comparable, V any] struct{ t *state.Table[K, []V] }

func (l plainLists[K, V]) Get(s int, k K) []V {
	v, _ := l.t.Get(s, k)
	return v
}

func (l plainLists[K, V]) Add(s int, k K, v V) {
	old, _ := l.t.Get(s, k)
	l.t.Put(s, k, append(old, v))
}

func (l plainLists[K, V]) Update(s int, k K, vs []V) { l.t.Put(s, k, append([]V(nil), vs...)) }
func (l plainLists[K, V]) Delete(s int, k K)         { l.t.Delete(s, k) }
