package weir

import (
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/state"
)

// The state handles below hold one value (or list, or map) per key of a
// keyed operator. They are created in StateOpener.Open and used from the
// operator's callbacks, where they always address the current key. The
// engine snapshots them with checkpoints; a function must keep everything it
// needs across records in them rather than in its own fields.
//
// A function may change a value it read from state in place (a map in
// it, a slice's elements, a pointed-to struct), as Flink functions do;
// so may the accumulators of AggregateWindow and AggregatingState, the
// first argument of a reduce function, the records ProcessWindow hands
// over and those an IntervalJoin's function receives. Checkpoints never
// race with such changes: state of a type that can change in place (one
// holding a map, slice, pointer or interface) is encoded while the task
// pauses for the checkpoint's synchronous part, so that pause grows with
// that state's size; state of numbers, strings, and structs and arrays
// of them is frozen copy-on-write and encoded in the background. The
// lists of ListState and the maps of MapState are the handles' own:
// change them through the handles, not in place.

// Immutable is implemented by a state type that holds a slice, map or
// pointer but whose values are never changed in place once stored: the
// user's code builds a new value and stores it with Update instead of
// changing the one Value returned. Such state is snapshotted as state of
// numbers and strings is, copy-on-write and encoded off the task's
// goroutine (incrementally where the backend does), instead of encoded
// whole while the task waits. Declare it with a method on a named type:
//
//	type topBids []Bid
//
//	func (topBids) ImmutableInState() {}
//
// Changing a stored value in place after declaring this can corrupt a
// checkpoint: the snapshot may share the value.
type Immutable = state.Immutable

// ValueState holds one value per key.
type ValueState[V any, K comparable] struct {
	t    valueTable[K, V]
	core *keyed.Core[K]
}

// NewValueState creates (or, on a repeated name, returns) the value state
// name. The type arguments are the value type and then the key type, which
// Go infers from sc: NewValueState[int64](sc, "count"). Options: StateTTL.
func NewValueState[V any, K comparable](sc *StateContext[K], name string, opts ...StateOption) *ValueState[V, K] {
	return &ValueState[V, K]{t: newValueTable[V](sc, name, opts), core: sc.core}
}

// Value returns the current key's value and whether it is set.
func (s *ValueState[V, K]) Value() (V, bool) { return s.t.Get(s.core.Shard, s.core.Key) }

// Update sets the current key's value.
func (s *ValueState[V, K]) Update(v V) { s.t.Put(s.core.Shard, s.core.Key, v) }

// Clear removes the current key's value.
func (s *ValueState[V, K]) Clear() { s.t.Delete(s.core.Shard, s.core.Key) }

// ListState holds a list of values per key.
type ListState[V any, K comparable] struct {
	t    listTable[K, V]
	core *keyed.Core[K]
}

// NewListState creates the list state name. Options: StateTTL, under
// which each element expires on its own.
func NewListState[V any, K comparable](sc *StateContext[K], name string, opts ...StateOption) *ListState[V, K] {
	return &ListState[V, K]{t: newListTable[V](sc, name, opts), core: sc.core}
}

// Get returns the current key's list; the caller must not change the list
// (append to it, set or reorder its elements), but may change what its
// elements hold in place.
func (s *ListState[V, K]) Get() []V { return s.t.Get(s.core.Shard, s.core.Key) }

// Add appends v to the current key's list.
func (s *ListState[V, K]) Add(v V) { s.t.Add(s.core.Shard, s.core.Key, v) }

// Update replaces the current key's list.
func (s *ListState[V, K]) Update(l []V) {
	if len(l) == 0 {
		s.t.Delete(s.core.Shard, s.core.Key)
		return
	}
	s.t.Update(s.core.Shard, s.core.Key, l)
}

// Clear empties the current key's list.
func (s *ListState[V, K]) Clear() { s.t.Delete(s.core.Shard, s.core.Key) }

// MapState holds a map per key.
type MapState[UK comparable, UV any, K comparable] struct {
	t    mapTable[K, UK, UV]
	core *keyed.Core[K]
}

// NewMapState creates the map state name. Options: StateTTL, under which
// each entry (user key) expires on its own.
func NewMapState[UK comparable, UV any, K comparable](sc *StateContext[K], name string, opts ...StateOption) *MapState[UK, UV, K] {
	return &MapState[UK, UV, K]{t: newMapTable[UK, UV](sc, name, opts), core: sc.core}
}

// Get returns the entry uk of the current key's map.
func (s *MapState[UK, UV, K]) Get(uk UK) (UV, bool) { return s.t.Get(s.core.Shard, s.core.Key, uk) }

// Put sets the entry uk of the current key's map.
func (s *MapState[UK, UV, K]) Put(uk UK, uv UV) { s.t.Put(s.core.Shard, s.core.Key, uk, uv) }

// Compute sets the entry uk of the current key's map to what f returns,
// given the entry's value now (ok: it has one). It finds the key's map
// once, where Get and then Put find it twice. f must not use the state;
// a func value kept in a field, not made at each call, allocates nothing.
func (s *MapState[UK, UV, K]) Compute(uk UK, f func(old UV, ok bool) UV) {
	s.t.Compute(s.core.Shard, s.core.Key, uk, f)
}

// Delete removes the entry uk of the current key's map.
func (s *MapState[UK, UV, K]) Delete(uk UK) { s.t.Remove(s.core.Shard, s.core.Key, uk) }

// All calls f for every entry of the current key's map until f returns
// false. f must not modify the map.
func (s *MapState[UK, UV, K]) All(f func(UK, UV) bool) { s.t.All(s.core.Shard, s.core.Key, f) }

// Len returns the number of entries in the current key's map. Under
// StateTTL it visits them all.
func (s *MapState[UK, UV, K]) Len() int { return s.t.Len(s.core.Shard, s.core.Key) }

// Clear empties the current key's map.
func (s *MapState[UK, UV, K]) Clear() { s.t.Delete(s.core.Shard, s.core.Key) }

// ReducingState folds the values added for a key with a reduce function.
type ReducingState[V any, K comparable] struct {
	t      valueTable[K, V]
	core   *keyed.Core[K]
	reduce func(V, V) V
}

// NewReducingState creates the reducing state name. Options: StateTTL.
func NewReducingState[V any, K comparable](sc *StateContext[K], name string, reduce func(acc, v V) V, opts ...StateOption) *ReducingState[V, K] {
	return &ReducingState[V, K]{t: newValueTable[V](sc, name, opts), core: sc.core, reduce: reduce}
}

// Add folds v into the current key's value and returns the result.
func (s *ReducingState[V, K]) Add(v V) V {
	if acc, ok := s.t.Get(s.core.Shard, s.core.Key); ok {
		v = s.reduce(acc, v)
	}
	s.t.Put(s.core.Shard, s.core.Key, v)
	return v
}

// Get returns the current key's folded value.
func (s *ReducingState[V, K]) Get() (V, bool) { return s.t.Get(s.core.Shard, s.core.Key) }

// Clear removes the current key's value.
func (s *ReducingState[V, K]) Clear() { s.t.Delete(s.core.Shard, s.core.Key) }

// Aggregator folds inputs into an accumulator and derives a result from it.
// Merge combines two accumulators (needed by session windows).
type Aggregator[In, Acc, Out any] interface {
	Create() Acc
	Add(acc Acc, in In) Acc
	Merge(a, b Acc) Acc
	Result(acc Acc) Out
}

// AggregatingState folds the inputs added for a key with an Aggregator.
type AggregatingState[In, Acc, Out any, K comparable] struct {
	t    valueTable[K, Acc]
	core *keyed.Core[K]
	agg  Aggregator[In, Acc, Out]
}

// NewAggregatingState creates the aggregating state name. Options:
// StateTTL.
func NewAggregatingState[In, Acc, Out any, K comparable](sc *StateContext[K], name string, agg Aggregator[In, Acc, Out], opts ...StateOption) *AggregatingState[In, Acc, Out, K] {
	return &AggregatingState[In, Acc, Out, K]{t: newValueTable[Acc](sc, name, opts), core: sc.core, agg: agg}
}

// Add folds in into the current key's accumulator.
func (s *AggregatingState[In, Acc, Out, K]) Add(in In) {
	acc, ok := s.t.Get(s.core.Shard, s.core.Key)
	if !ok {
		acc = s.agg.Create()
	}
	s.t.Put(s.core.Shard, s.core.Key, s.agg.Add(acc, in))
}

// Get returns the result for the current key.
func (s *AggregatingState[In, Acc, Out, K]) Get() (Out, bool) {
	acc, ok := s.t.Get(s.core.Shard, s.core.Key)
	if !ok {
		var zero Out
		return zero, false
	}
	return s.agg.Result(acc), true
}

// Clear removes the current key's accumulator.
func (s *AggregatingState[In, Acc, Out, K]) Clear() { s.t.Delete(s.core.Shard, s.core.Key) }

// AggregatorFuncs builds an Aggregator from four functions, which lets Go
// infer the type arguments of AggregateWindow from them.
func AggregatorFuncs[In, Acc, Out any](create func() Acc, add func(Acc, In) Acc, merge func(Acc, Acc) Acc, result func(Acc) Out) Aggregator[In, Acc, Out] {
	return funcAggregator[In, Acc, Out]{create, add, merge, result}
}

type funcAggregator[In, Acc, Out any] struct {
	create func() Acc
	add    func(Acc, In) Acc
	merge  func(Acc, Acc) Acc
	result func(Acc) Out
}

func (f funcAggregator[In, Acc, Out]) Create() Acc          { return f.create() }
func (f funcAggregator[In, Acc, Out]) Add(a Acc, in In) Acc { return f.add(a, in) }
func (f funcAggregator[In, Acc, Out]) Merge(a, b Acc) Acc   { return f.merge(a, b) }
func (f funcAggregator[In, Acc, Out]) Result(a Acc) Out     { return f.result(a) }

// Count returns an Aggregator counting records of type T.
func Count[T any]() Aggregator[T, int64, int64] {
	return AggregatorFuncs(func() int64 { return 0 }, func(n int64, _ T) int64 { return n + 1 },
		func(a, b int64) int64 { return a + b }, func(n int64) int64 { return n })
}
