// Package dedup implements the deduplicating operator (weir.Deduplicate,
// whose doc comment is the contract): the exact state of the keys
// forwarded, by key group and generation, with a Bloom filter per slot as
// the fast path for keys certainly not seen (as in MillWheel), expiry by
// whole generations, and the mark that keeps the contract through an
// at-most-once restart.
package dedup

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/operator"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/state"
	"github.com/weir-stream/weir/internal/task"
)

// dedupSlot names one piece of a Deduplicate operator's exact state: the
// keys of one key group forwarded at event times in one generation, the
// span [Gen*width, (Gen+1)*width). Its key group is part of the name, so
// the slots split by key group on restore like any keyed state.
type dedupSlot struct {
	KeyGroup int32
	Gen      int64
}

// Config sizes the Bloom filters: Expected distinct keys per horizon in
// the whole operator at a false-positive rate of FPRate; Filter false
// turns them off. Stats, if not nil, receives the subtasks' counters.
type Config struct {
	Expected int
	FPRate   float64
	Filter   bool
	Stats    *Stats
}

// Node is the dedup operator's node. Output port 0 receives the records
// forwarded, port 1 the late ones.
type Node[K comparable, T any] struct {
	// Key returns a record's identity; Keys is the key type's codec and
	// hash.
	Key  func(T) K
	Keys keyed.Keys[K]
	// Horizon is how long a key is remembered, Width the span of event
	// time of a generation; both in milliseconds.
	Horizon int64
	Width   int64
	Config  Config
}

// Redistribution says that the operator's state is keyed: it moves by key
// group when the task restores at another parallelism.
func (*Node[K, T]) Redistribution() task.Redistribution { return task.ByKeyGroup }

// HandsOver says that the node's state can pass in memory at a live
// rescale (task.HandOverNode).
func (*Node[K, T]) HandsOver() {}

func (n *Node[K, T]) Build(ctx *task.Context, outs []any) (task.Built, error) {
	op := &dedupOp[K, T]{Node: n, core: keyed.NewCore(ctx, n.Keys), next: operator.Out[T](outs, 0), late: operator.Out[T](outs, 1),
		c: n.Config.Stats.counters(), forgotten: math.MinInt64}
	if op.gap = ctx.Gap; op.gap != nil && op.gap.Prev != dataflow.MinWatermark {
		// An at-most-once restart: the keys forwarded before the failure
		// are forgotten with the state, and each may be as recent as the
		// mark.
		op.forgotten = addSat(op.gap.Prev, n.Horizon)
	}
	if ctx.KeyGroupEnd > ctx.KeyGroupStart { // as state.NewBackend
		op.kgStart = ctx.KeyGroupStart
	}
	if n.Config.Filter {
		// Each filter holds one key group's keys of one generation.
		per := float64(n.Config.Expected) * float64(n.Width) / float64(n.Horizon) / float64(max(ctx.MaxParallelism, 1))
		op.m, op.k = bloom.EstimateParameters(uint(max(16, math.Ceil(per))), n.Config.FPRate)
		op.locs = make([]uint64, op.k)
	}
	return task.Built{Op: op, Inputs: []any{op}}, nil
}

// dedupOp is one subtask of the operator.
//
// The exact state is a keyed table from slot (key group, generation) to the
// map of the slot's keys and the event time each was forwarded at. Beside
// each slot the operator keeps, in memory only, a Bloom filter of its keys
// (rebuilt in Open from restored state) and a cached reference to its map.
// A lookup tests every live generation of the key's key group: a filter's
// "no" skips that generation, a "maybe" reads the exact map. Expiry drops
// whole generations when the watermark passes their end plus the horizon;
// keys of a live generation that are already past their horizon count as
// forgotten by their stored time.
type dedupOp[K comparable, T any] struct {
	*Node[K, T]
	task.Base
	core    *keyed.Core[K]
	next    task.Collector[T]
	late    task.Collector[T]
	seen    *state.Table[dedupSlot, map[K]int64]
	gens    [][]*dedupGen[K] // per shard (key group), ascending by generation
	live    []int64          // generations live in any shard, ascending
	m, k    uint             // filter size; 0 without filters
	kgStart int              // the first key group owned: shard s is key group kgStart+s
	locs    []uint64         // the current key's filter locations (k of them)
	n       dedupLocal
	c       *counters
	// Under at-most-once, gap holds the highest event time forwarded, over
	// every attempt; after a restart, records before forgotten (that mark
	// plus the horizon) may repeat a key forwarded before the failure and
	// are dropped until the watermark reaches it.
	gap       *task.GapMark
	forgotten int64
}

// dedupGen is the in-memory side of one slot.
type dedupGen[K comparable] struct {
	gen    int64
	filter *bloom.BloomFilter // nil without the fast path
	// ids is the slot's current map (nil: not looked up yet); mutable
	// reports whether it came from GetMutable in backend epoch epoch, so
	// that it may be changed in place until the next snapshot.
	ids     map[K]int64
	epoch   uint64
	mutable bool
}

// dedupLocal are the counters the subtask goroutine keeps in plain fields;
// publish copies them to the shared ones, so records cost no atomics.
type dedupLocal struct {
	forwarded, duplicates, late, forgotten int64
	negatives, exact, falsePos, rebuilt    int64
	ids, bits                              int64
	unpublished                            int
}

func (o *dedupOp[K, T]) Snapshot(so task.SnapshotOptions) (func(dst []byte) (task.Encoded, error), error) {
	o.publish()
	return o.core.Snapshot(so)
}

func (o *dedupOp[K, T]) Restore(data []byte) error { return o.core.Restore(data) }

// KeyedCore returns the operator's keyed core, for a hand-over.
func (o *dedupOp[K, T]) KeyedCore() *keyed.Core[K] { return o.core }

// Adopt takes over the keyed state of retired operators before Open.
func (o *dedupOp[K, T]) Adopt(a task.Adoption) error { return o.core.Adopt(a) }

// Open registers the exact state, which claims a restored snapshot, and
// rebuilds the filters and the generation lists from it.
func (o *dedupOp[K, T]) Open(*task.Context) error {
	if o.core.Keys.Codec == nil {
		return fmt.Errorf("%s: keys of type %v cannot be checkpointed: no codec (set one with KeyedStream.WithKeyCodec)", o.core.Name, reflect.TypeFor[K]())
	}
	sc, err := codec.For[dedupSlot]()
	if err != nil {
		return err
	}
	tc, err := codec.For[int64]()
	if err != nil {
		return err
	}
	o.seen, err = state.Register(o.core.Backend, "dedup-ids", state.TableOptions[dedupSlot, map[K]int64]{
		Key: sc, Value: state.MapCodec(o.core.Keys.Codec, tc), Clone: maps.Clone[map[K]int64],
		KeyGroup: func(s dedupSlot) int { return int(s.KeyGroup) }})
	if err != nil {
		return err
	}
	o.gens = make([][]*dedupGen[K], o.seen.Shards())
	for s := range o.gens {
		o.seen.All(s, func(slot dedupSlot, ids map[K]int64) bool {
			g := o.addGen(s, slot.Gen)
			if g.filter != nil {
				for id := range ids {
					filterLocations(o.locs, o.core.Keys.Hash(id))
					filterAdd(g.filter, o.locs)
				}
			}
			o.n.rebuilt += int64(len(ids))
			o.n.ids += int64(len(ids))
			return true
		})
	}
	o.publish()
	return nil
}

func (o *dedupOp[K, T]) Collect(ts int64, v T) {
	if ts == dataflow.MinWatermark {
		task.Failf("%s: record without event time; Deduplicate needs timestamps (give the source WithTimestamps)", o.core.Name)
	}
	if o.n.unpublished++; o.n.unpublished >= 4096 {
		o.publish()
	}
	if addSat(ts, o.Horizon) <= o.core.WM {
		o.n.late++
		o.late.Collect(ts, v)
		return
	}
	if ts < o.forgotten {
		o.n.forgotten++
		return
	}
	k := o.Key(v)
	h := o.core.Keys.Hash(k)
	s := o.core.ShardOf(task.KeyGroup(h, o.core.MaxParallelism))
	if o.locs != nil {
		filterLocations(o.locs, h)
	}
	epoch := o.core.Backend.Epoch()
	if o.remembered(s, k) {
		o.n.duplicates++
		return
	}
	g := o.addGen(s, floorDiv(ts, o.Width))
	ids := o.writable(s, g, epoch)
	if _, had := ids[k]; !had {
		o.n.ids++
	}
	ids[k] = ts
	if g.filter != nil {
		filterAdd(g.filter, o.locs)
	}
	o.n.forwarded++
	if o.gap != nil {
		o.gap.Raise(ts) // before the record can reach any output
	}
	o.next.Collect(ts, v)
}

// remembered reports whether k, whose filter locations are in o.locs, is
// remembered: held in a live generation of shard s with a time whose horizon the watermark
// has not reached.
func (o *dedupOp[K, T]) remembered(s int, k K) bool {
	gens := o.gens[s]
	for i := len(gens) - 1; i >= 0; i-- { // newest first: most duplicates are recent
		g := gens[i]
		if g.filter != nil && !g.filter.TestLocations(o.locs) {
			o.n.negatives++
			continue
		}
		o.n.exact++
		t, ok := o.readable(s, g)[k]
		if !ok {
			if g.filter != nil {
				o.n.falsePos++
			}
			continue
		}
		if addSat(t, o.Horizon) > o.core.WM {
			return true
		}
	}
	return false
}

// readable returns g's map for reading. The cached map stays current
// across snapshots: only this operator writes the slot, and writable
// replaces the cache when copy-on-write gives the slot a new map.
func (o *dedupOp[K, T]) readable(s int, g *dedupGen[K]) map[K]int64 {
	if g.ids == nil {
		g.ids, _ = o.seen.Get(s, dedupSlot{int32(o.kgStart + s), g.gen})
		g.mutable = false
	}
	return g.ids
}

// writable returns g's map, which the caller may change in place: after a
// snapshot the table copies it once (copy-on-write).
func (o *dedupOp[K, T]) writable(s int, g *dedupGen[K], epoch uint64) map[K]int64 {
	if g.mutable && g.epoch == epoch {
		return g.ids
	}
	slot := dedupSlot{int32(o.kgStart + s), g.gen}
	ids, ok := o.seen.GetMutable(s, slot)
	if !ok {
		ids = map[K]int64{}
		o.seen.PutNew(s, slot, ids)
	}
	g.ids, g.epoch, g.mutable = ids, epoch, true
	return ids
}

// addGen returns shard s's generation gen, adding it (with an empty filter)
// if it is new.
func (o *dedupOp[K, T]) addGen(s int, gen int64) *dedupGen[K] {
	gens := o.gens[s]
	i, found := slices.BinarySearchFunc(gens, gen, func(g *dedupGen[K], gen int64) int { return cmp.Compare(g.gen, gen) })
	if found {
		return gens[i]
	}
	g := &dedupGen[K]{gen: gen}
	if o.m > 0 {
		g.filter = bloom.New(o.m, o.k)
		o.n.bits += int64(g.filter.Cap())
	}
	o.gens[s] = slices.Insert(gens, i, g)
	if j, ok := slices.BinarySearch(o.live, gen); !ok {
		o.live = slices.Insert(o.live, j, gen)
	}
	return g
}

// Watermark drops the generations whose every key is past its horizon.
func (o *dedupOp[K, T]) Watermark(wm int64) int64 {
	o.core.WM = wm
	if wm >= o.forgotten {
		o.forgotten = math.MinInt64 // what was lost would be forgotten by now
	}
	n := 0
	for n < len(o.live) && addSat(o.genEnd(o.live[n]), o.Horizon) <= wm {
		o.dropGen(o.live[n])
		n++
	}
	if n > 0 {
		o.live = slices.Delete(o.live, 0, n)
	}
	o.publish()
	return wm
}

// genEnd returns the last event time of generation gen.
func (o *dedupOp[K, T]) genEnd(gen int64) int64 { return addSat(gen*o.Width, o.Width-1) }

// dropGen removes generation gen from every shard.
func (o *dedupOp[K, T]) dropGen(gen int64) {
	for s, gens := range o.gens {
		i, found := slices.BinarySearchFunc(gens, gen, func(g *dedupGen[K], gen int64) int { return cmp.Compare(g.gen, gen) })
		if !found {
			continue
		}
		g := gens[i]
		slot := dedupSlot{int32(o.kgStart + s), gen}
		ids, _ := o.seen.Get(s, slot)
		o.n.ids -= int64(len(ids))
		o.seen.Delete(s, slot)
		if g.filter != nil {
			o.n.bits -= int64(g.filter.Cap())
		}
		o.gens[s] = slices.Delete(gens, i, i+1)
	}
}

func (o *dedupOp[K, T]) EndInput() error {
	o.publish()
	return nil
}

// Close publishes the counters and zeroes the gauges: the subtask holds
// nothing any more.
func (o *dedupOp[K, T]) Close() error {
	o.publish()
	o.c.ids.Store(0)
	o.c.bits.Store(0)
	return o.core.Close()
}

// Settle lets an LSM state backend write its cached changes through.
func (o *dedupOp[K, T]) Settle() error { return o.core.Settle() }

func (o *dedupOp[K, T]) publish() {
	c, n := o.c, &o.n
	c.forwarded.Store(n.forwarded)
	c.duplicates.Store(n.duplicates)
	c.late.Store(n.late)
	c.forgotten.Store(n.forgotten)
	c.negatives.Store(n.negatives)
	c.exact.Store(n.exact)
	c.falsePos.Store(n.falsePos)
	c.rebuilt.Store(n.rebuilt)
	c.ids.Store(n.ids)
	c.bits.Store(n.bits)
	n.unpublished = 0
}

// filterLocations sets locs to the filter locations of a key with hash h
// (before reduction modulo the filter's size, as bloom.Locations returns
// them). They come from the key hash by double hashing (Kirsch and
// Mitzenmacher: location i is a + i*b) with a and b two independent mixes
// of h, instead of the library's murmur hash of the key's bytes: the key
// is hashed once per record, not once per live filter, and nothing is
// allocated. The key hash alone would not do as a: within a key group it
// is fixed modulo the max parallelism.
func filterLocations(locs []uint64, h uint64) {
	a := task.HashUint64(h ^ 0x5851f42d4c957f2d)
	b := task.HashUint64(h^0x14057b7ef767814f) | 1
	for i := range locs {
		locs[i] = a + uint64(i)*b
	}
}

// filterAdd sets a key's locations in f; f.TestLocations tests them.
func filterAdd(f *bloom.BloomFilter, locs []uint64) {
	bits, m := f.BitSet(), uint64(f.Cap())
	for _, l := range locs {
		bits.Set(uint(l % m))
	}
}

// addSat returns a+b, saturated at the int64 bounds.
func addSat(a, b int64) int64 {
	s := a + b
	if b > 0 && s < a {
		return math.MaxInt64
	}
	if b < 0 && s > a {
		return math.MinInt64
	}
	return s
}

// floorDiv returns a/b rounded towards negative infinity, for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
