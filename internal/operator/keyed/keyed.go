// Package keyed holds what every keyed operator of a subtask shares: the
// key type's codec and stable hash, and the Core — the current key and
// its shard, the state backend, and the event-time and processing-time
// timers. The keyed process function, windows and dedup build on it.
package keyed

import (
	"fmt"
	"maps"
	"reflect"
	"sync"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/state"
	"github.com/weir-stream/weir/internal/task"
)

// Keys is what a keyed operator needs to know about its key type: the
// codec that stores keys in snapshots (nil when K has none; state then
// cannot be registered) and the stable hash that decides key groups.
type Keys[K comparable] struct {
	Codec codec.Codec[K]
	Hash  func(K) uint64
}

// Hasher returns the stable key hash for K: direct for strings and
// integers, over the key's encoding in c otherwise (a nil c then fails
// the task when a key is hashed). The hash of a key is always that of its
// encoding, however it is computed, so that key groups stay where
// checkpoints and savepoints put them.
func Hasher[K comparable](c codec.Codec[K]) func(K) uint64 {
	var zero K
	switch any(zero).(type) {
	case string:
		return func(k K) uint64 { return task.HashString(any(k).(string)) }
	case int:
		return func(k K) uint64 { return task.HashUint64(uint64(any(k).(int))) }
	case int64:
		return func(k K) uint64 { return task.HashUint64(uint64(any(k).(int64))) }
	case int32:
		return func(k K) uint64 { return task.HashUint64(uint64(any(k).(int32))) }
	case uint64:
		return func(k K) uint64 { return task.HashUint64(any(k).(uint64)) }
	case uint32:
		return func(k K) uint64 { return task.HashUint64(uint64(any(k).(uint32))) }
	}
	if codec.Bounded(c) {
		// A small key of integer columns: encoded on the stack, without
		// a buffer from the pool.
		return func(k K) uint64 {
			var buf [codec.BoundedLen]byte
			return task.HashBytes(codec.AppendBounded(c, &buf, k))
		}
	}
	return func(k K) uint64 {
		if c == nil {
			task.Failf("no codec to hash key of type %v", reflect.TypeFor[K]())
		}
		bp := hashBufs.Get().(*[]byte)
		b := c.Append((*bp)[:0], k)
		h := task.HashBytes(b)
		if cap(b) <= maxHashBuf {
			*bp = b
			hashBufs.Put(bp)
		}
		return h
	}
}

// hashBufs holds the buffers keys are encoded into to be hashed, so that
// hashing a key allocates nothing.
var hashBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64); return &b }}

// maxHashBuf is the largest buffer hashBufs keeps: a buffer a very large
// key grew is left to the collector.
const maxHashBuf = 4 << 10

// Core is what every keyed operator of a subtask shares: the current key,
// the state backend and the timers. An operator sets the current key
// (SetKey) and time (TS) before it calls into code that reads state.
type Core[K comparable] struct {
	// Key is the current key, Shard its shard in keyed tables.
	Key   K
	Shard int
	// TS is the current record's event time, or the firing timer's time;
	// WM the operator's watermark.
	TS      int64
	WM      int64
	Backend *state.Backend
	// Events and Procs are the event-time and processing-time timers,
	// registered by Open.
	Events *state.Timers[K]
	Procs  *state.Timers[K]
	// Now returns the wall-clock time in epoch milliseconds.
	Now func() int64
	// Name is the operator's name, for errors.
	Name           string
	Keys           Keys[K]
	MaxParallelism int
}

// NewCore returns the core of a keyed operator of the subtask ctx runs,
// with a state backend for the subtask's key groups.
func NewCore[K comparable](ctx *task.Context, keys Keys[K]) *Core[K] {
	return &Core[K]{WM: dataflow.MinWatermark, Now: ctx.Now, Name: ctx.Operator, Keys: keys, MaxParallelism: ctx.MaxParallelism,
		Backend: NewBackend(ctx)}
}

// NewBackend returns the state backend of the operator ctx describes: in
// memory, or in an LSM store when the job chose the pebble backend.
func NewBackend(ctx *task.Context) *state.Backend {
	if ctx.State == nil {
		b := state.NewBackend(ctx.KeyGroupStart, ctx.KeyGroupEnd, ctx.MaxParallelism)
		if m := ctx.Memory; m != nil {
			b.SetIncremental(state.Incremental{Files: m.Files, From: m.From, Ctx: ctx.Ctx})
		}
		return b
	}
	return state.NewLSMBackend(ctx.KeyGroupStart, ctx.KeyGroupEnd, ctx.MaxParallelism, state.LSMOptions{
		Env: ctx.State.Env, Files: ctx.State.Files, Ctx: ctx.Ctx,
		Key: fmt.Sprintf("%s/%s/%d-%d", ctx.Job, ctx.UID, ctx.KeyGroupStart, ctx.KeyGroupEnd)})
}

// Open opens the state backend and registers the timers; it runs after a
// restore, so that restored state is claimed. A restored store whose
// files fail verification fails it with an error wrapping lsm.ErrCorrupt.
func (c *Core[K]) Open() error {
	if err := c.Backend.Open(); err != nil {
		return err
	}
	var err error
	if c.Events, err = state.RegisterTimers(c.Backend, "timers-event", c.Keys.Codec, c.KeyGroup); err != nil {
		return err
	}
	c.Procs, err = state.RegisterTimers(c.Backend, "timers-processing", c.Keys.Codec, c.KeyGroup)
	return err
}

// KeyGroup returns the key group of k.
func (c *Core[K]) KeyGroup(k K) int { return task.KeyGroup(c.Keys.Hash(k), c.MaxParallelism) }

// SetKey makes k the current key.
func (c *Core[K]) SetKey(k K) {
	c.Key = k
	c.Shard = c.ShardOf(c.KeyGroup(k))
}

// ShardOf returns the shard of key group kg in keyed tables. A key group
// outside the subtask's range means a record reached the wrong subtask:
// it fails the task with a task.KeyGroupError rather than touch state
// that is not there.
func (c *Core[K]) ShardOf(kg int) int {
	if start, end := c.Backend.KeyGroups(); kg < start || kg >= end {
		task.Fail(&task.KeyGroupError{KeyGroup: kg, Start: start, End: end})
	}
	return c.Backend.Shard(kg)
}

// Snapshot freezes the keyed state; see task.Snapshotter.
func (c *Core[K]) Snapshot(o task.SnapshotOptions) (func(dst []byte) (task.Encoded, error), error) {
	enc, err := c.Backend.Snapshot(state.SnapshotOptions{Savepoint: o.Savepoint})
	if err != nil {
		return nil, err
	}
	return func(dst []byte) (task.Encoded, error) {
		e, err := enc(dst)
		return task.Encoded{Data: e.Data, Shared: e.Shared, SharedBytes: e.SharedBytes, Uploaded: e.Uploaded}, err
	}, nil
}

// Settle lets an LSM backend write its cached changes through; see
// task.Settler.
func (c *Core[K]) Settle() error { return c.Backend.Settle() }

// Close releases the state backend.
func (c *Core[K]) Close() error { return c.Backend.Close() }

// Restore loads keyed state before Open; see task.Snapshotter.
func (c *Core[K]) Restore(data []byte) error { return c.Backend.Restore(data) }

// Holder is an operator built on a Core: the operators whose state a
// live rescale hands over in memory (task.Adopter).
type Holder[K comparable] interface {
	KeyedCore() *Core[K]
}

// Adopt takes over, before Open, the keyed state and timers of the
// retired operators in a (each a Holder[K]) for c's key groups
// (state.Backend.Adopt).
func (c *Core[K]) Adopt(a task.Adoption) error {
	old := make([]*state.Backend, len(a.Old))
	for i, o := range a.Old {
		h, ok := o.(Holder[K])
		if !ok {
			return fmt.Errorf("the retired operator of subtask %d (%T) holds no keyed state of this kind", a.From[i], o)
		}
		old[i] = h.KeyedCore().Backend
	}
	return c.Backend.Adopt(old...)
}

// Register registers the keyed table name of values of type V, stored by
// codec.For[V] and copied on first access after a snapshot by clone (nil:
// the operator does not mutate values in place). inPlace says users'
// functions may change values in place (see state.TableOptions.InPlace).
// It fails when the state name has a time-to-live (state.Backend.CheckTTL).
func Register[V any, K comparable](c *Core[K], name string, clone func(V) V, inPlace bool) (*state.Table[K, V], error) {
	if err := c.Backend.CheckTTL(name, false); err != nil {
		return nil, err
	}
	return register[V](c, name, clone, inPlace)
}

// RegisterTTL registers the table of the keyed state name with a
// time-to-live, whose entries E hold the state's values with their
// stamps (state.Stamped, state.StampedList, or maps of state.Stamped), as
// Register does, under state.TTLName(name). It fails when the state name
// has no time-to-live (state.Backend.CheckTTL). The caller wraps the
// table in the state package's TTLValues, TTLLists or TTLMaps, with the
// time-to-live on c's clock (TTL).
func RegisterTTL[E any, K comparable](c *Core[K], name string, clone func(E) E, inPlace bool) (*state.Table[K, E], error) {
	if err := c.Backend.CheckTTL(name, true); err != nil {
		return nil, err
	}
	return register[E](c, state.TTLName(name), clone, inPlace)
}

// TTL returns the time-to-live of millis milliseconds of processing time
// on c's clock (Now); onRead says reads restart it too.
func (c *Core[K]) TTL(millis int64, onRead bool) state.TTL {
	return state.TTL{Millis: millis, OnRead: onRead, Now: func() int64 { return c.Now() }}
}

// RegisterMap registers the keyed table name of maps from UK to UV (a
// MapState's), as Register does, copied on first access after a snapshot
// by maps.Clone. The maps are stored by state.MapCodec: in iteration
// order rather than codec.For's sorted order (a snapshot needs no
// canonical form, and sorting every changed key's map at each checkpoint
// was most of a join's checkpoint cost), under the same schema, so
// either reads the other's snapshots.
func RegisterMap[UK comparable, UV any, K comparable](c *Core[K], name string, inPlace bool) (*state.Table[K, map[UK]UV], error) {
	if err := c.Backend.CheckTTL(name, false); err != nil {
		return nil, err
	}
	vc, err := mapCodec[UK, UV](name)
	if err != nil {
		return nil, err
	}
	return registerWith(c, name, vc, maps.Clone, inPlace)
}

// RegisterMapState is RegisterMap for a MapState's maps, which are
// written entry by entry: a delta of their incremental snapshots holds
// the entries written, not each changed key's whole map
// (state.MapTable).
func RegisterMapState[UK comparable, UV any, K comparable](c *Core[K], name string, inPlace bool) (*state.MapTable[K, UK, UV], error) {
	if err := c.Backend.CheckTTL(name, false); err != nil {
		return nil, err
	}
	vc, err := mapCodec[UK, UV](name)
	if err != nil {
		return nil, err
	}
	if c.Keys.Codec == nil {
		return nil, errNoKeyCodec[K](name)
	}
	return state.RegisterMap(c.Backend, name, state.TableOptions[K, map[UK]UV]{
		Key: c.Keys.Codec, Value: vc, KeyGroup: c.KeyGroup, Clone: maps.Clone[map[UK]UV], InPlace: inPlace})
}

// RegisterTTLMap is RegisterMap for map state with a time-to-live, whose
// entries carry their stamps (see RegisterTTL).
func RegisterTTLMap[UK comparable, UV any, K comparable](c *Core[K], name string, inPlace bool) (*state.Table[K, map[UK]state.Stamped[UV]], error) {
	if err := c.Backend.CheckTTL(name, true); err != nil {
		return nil, err
	}
	vc, err := mapCodec[UK, state.Stamped[UV]](name)
	if err != nil {
		return nil, err
	}
	return registerWith(c, state.TTLName(name), vc, maps.Clone, inPlace)
}

func mapCodec[UK comparable, UV any](name string) (codec.Codec[map[UK]UV], error) {
	kc, err := codec.For[UK]()
	if err != nil {
		return nil, fmt.Errorf("state %q: map keys of type %v cannot be checkpointed: %w", name, reflect.TypeFor[UK](), err)
	}
	vc, err := codec.For[UV]()
	if err != nil {
		return nil, fmt.Errorf("state %q: map values of type %v cannot be checkpointed: %w", name, reflect.TypeFor[UV](), err)
	}
	return state.MapCodec(kc, vc), nil
}

func register[V any, K comparable](c *Core[K], name string, clone func(V) V, inPlace bool) (*state.Table[K, V], error) {
	vc, err := codec.For[V]()
	if err != nil {
		return nil, fmt.Errorf("state %q: values of type %v cannot be checkpointed: %w", name, reflect.TypeFor[V](), err)
	}
	return registerWith(c, name, vc, clone, inPlace)
}

func registerWith[V any, K comparable](c *Core[K], name string, vc codec.Codec[V], clone func(V) V, inPlace bool) (*state.Table[K, V], error) {
	if c.Keys.Codec == nil {
		return nil, errNoKeyCodec[K](name)
	}
	return state.Register(c.Backend, name, state.TableOptions[K, V]{
		Key: c.Keys.Codec, Value: vc, KeyGroup: c.KeyGroup, Clone: clone, InPlace: inPlace})
}

// errNoKeyCodec is the error for state name of an operator whose keys of
// type K have no codec.
func errNoKeyCodec[K any](name string) error {
	return fmt.Errorf("state %q: keys of type %v cannot be checkpointed: no codec (set one with KeyedStream.WithKeyCodec)", name, reflect.TypeFor[K]())
}
