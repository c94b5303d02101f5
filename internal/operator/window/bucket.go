package window

import (
	"fmt"
	"maps"
	"reflect"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/operator/ordered"
	"github.com/weir-stream/weir/internal/state"
	"github.com/weir-stream/weir/internal/task"
)

// bucketOperator runs non-merging windows (tumbling, sliding). All keys of
// a window end at the same time, so state is kept per window: a bucket
// mapping each key to its accumulator, with one timer per window rather
// than per key and window. Firing a window walks its buckets and drops them
// whole, which also keeps the maps free of deleted entries.
//
// A window has one bucket per key group (a shard of the table): a
// snapshot's copy-on-write then copies one key group's keys at a time, and
// a restore decodes many small maps rather than one large one, which is
// several times faster per entry.
type bucketOperator[K comparable, T, Acc, Out any] struct {
	*Node[K, T, Acc, Out]
	task.Base
	core    *keyed.Core[K]
	next    task.Collector[Out]
	late    task.Collector[T]
	buckets *state.Table[Window, map[K]Acc]
	timers  *state.Timers[Window]
	wins    []Window
	emitTS  int64
	out     func(Out)
	// The buckets of the windows used last, by shard, valid while the
	// backend's epoch is cacheEpoch: consecutive records mostly share
	// their windows (one, or a few when windows slide).
	cache      [8]cachedWindow[K, Acc]
	last       int // the cache entry used last
	cacheEpoch uint64
	firing     []map[K]Acc // a firing window's buckets, by shard
	sizes      []int32     // per shard, the keys of the bucket fired last: a new bucket's room
	// ordered fires windows and keys in a fixed order (package ordered).
	ordered bool
	due     ordered.Timers[Window]
	keysBuf []ordered.Due[K] // a window's keys with their hashes, to sort
	sortBuf []ordered.Due[K]
}

func (o *bucketOperator[K, T, Acc, Out]) Snapshot(so task.SnapshotOptions) (func(dst []byte) (task.Encoded, error), error) {
	return o.core.Snapshot(so)
}

// Settle lets an LSM state backend write its cached changes through.
func (o *bucketOperator[K, T, Acc, Out]) Settle() error { return o.core.Settle() }

// Close releases the state backend.
func (o *bucketOperator[K, T, Acc, Out]) Close() error              { return o.core.Close() }
func (o *bucketOperator[K, T, Acc, Out]) Restore(data []byte) error { return o.core.Restore(data) }

// KeyedCore returns the operator's keyed core, for a hand-over.
func (o *bucketOperator[K, T, Acc, Out]) KeyedCore() *keyed.Core[K] { return o.core }

// Adopt takes over the keyed state of retired operators before Open.
func (o *bucketOperator[K, T, Acc, Out]) Adopt(a task.Adoption) error { return o.core.Adopt(a) }

func (o *bucketOperator[K, T, Acc, Out]) Open(*task.Context) error {
	wc, err := codec.For[Window]()
	if err != nil {
		return err
	}
	ac, err := codec.For[Acc]()
	if err != nil || o.core.Keys.Codec == nil {
		return fmt.Errorf("window state of %v keys and %v accumulators cannot be checkpointed: %v", reflect.TypeFor[K](), reflect.TypeFor[Acc](), err)
	}
	bc := state.MapCodec(o.core.Keys.Codec, ac)
	// The buckets are the operator's own, copied on write; the
	// accumulators in them are the user's functions' to change.
	if o.buckets, err = state.Register(o.core.Backend, "window-buckets", state.TableOptions[Window, map[K]Acc]{
		Key: wc, Value: bc, Clone: maps.Clone[map[K]Acc], Sharded: true, InPlace: state.Mutable[Acc]()}); err != nil {
		return err
	}
	if err := o.checkRestoredBuckets(); err != nil {
		return err
	}
	o.timers, err = state.RegisterTimers[Window](o.core.Backend, "window-timers", wc, nil)
	return err
}

// checkRestoredBuckets checks a few keys of every restored bucket against
// its key group: a checkpoint of an older weir, which kept one bucket per
// window, stored them all under key group 0.
func (o *bucketOperator[K, T, Acc, Out]) checkRestoredBuckets() error {
	var err error
	for s := range o.buckets.Shards() {
		o.buckets.All(s, func(win Window, b map[K]Acc) bool {
			n := 0
			for k := range b {
				if got := o.core.Backend.Shard(o.core.KeyGroup(k)); got != s {
					err = fmt.Errorf("%s: restoring window %v: a key stored in key group shard %d hashes to shard %d; the checkpoint was written by an older weir that kept one bucket per window, or with another key hash or max parallelism", o.core.Name, win, s, got)
					return false
				}
				if n++; n == 8 {
					break
				}
			}
			return true
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (o *bucketOperator[K, T, Acc, Out]) collect(v Out) { o.next.Collect(o.emitTS, v) }

// cachedWindow is a window's buckets by shard, nil where not looked up
// yet.
type cachedWindow[K comparable, Acc any] struct {
	win    Window
	shards []map[K]Acc
	valid  bool
}

// cached returns the cache entry of win, taking the oldest one when win
// has none.
func (o *bucketOperator[K, T, Acc, Out]) cached(win Window) *cachedWindow[K, Acc] {
	if epoch := o.core.Backend.Epoch(); epoch != o.cacheEpoch {
		for i := range o.cache {
			o.cache[i].valid = false // a snapshot holds the buckets: copy before a change
		}
		o.cacheEpoch = epoch
	}
	if c := &o.cache[o.last]; c.valid && c.win == win {
		return c
	}
	for i := range o.cache {
		if c := &o.cache[i]; c.valid && c.win == win {
			o.last = i
			return c
		}
	}
	o.last = (o.last + 1) % len(o.cache)
	c := &o.cache[o.last]
	if c.shards == nil {
		c.shards = make([]map[K]Acc, o.buckets.Shards())
	} else {
		clear(c.shards)
	}
	c.win, c.valid = win, true
	return c
}

// uncache forgets the cached buckets of win.
func (o *bucketOperator[K, T, Acc, Out]) uncache(win Window) {
	for i := range o.cache {
		if o.cache[i].win == win {
			o.cache[i].valid = false
		}
	}
}

// bucket returns the window's bucket of shard s, ready to be changed in
// place.
func (o *bucketOperator[K, T, Acc, Out]) bucket(win Window, s int) map[K]Acc {
	c := o.cached(win)
	if b := c.shards[s]; b != nil {
		return b
	}
	b, ok := o.buckets.GetMutable(s, win)
	if !ok {
		hint := 0
		if o.sizes != nil {
			hint = int(o.sizes[s])
		}
		b = make(map[K]Acc, hint)
		o.buckets.PutNew(s, win, b)
		if win.MaxTimestamp() > o.core.WM {
			o.timers.Register(win.MaxTimestamp(), win)
		}
	}
	c.shards[s] = b
	return b
}

func (o *bucketOperator[K, T, Acc, Out]) Collect(ts int64, v T) {
	if ts == dataflow.MinWatermark {
		task.Failf("%s: record without event time in an event-time window; give the source WithTimestamps", o.core.Name)
	}
	k := o.Key(v)
	s := o.core.ShardOf(o.core.KeyGroup(k))
	o.wins = o.Assign(o.wins[:0], ts)
	dropped := true
	for _, win := range o.wins {
		cleanup := cleanupTime(win, o.Lateness)
		if cleanup <= o.core.WM {
			continue // the window is gone
		}
		dropped = false
		b := o.bucket(win, s)
		acc, ok := b[k]
		if !ok {
			acc = o.Create()
		}
		acc = o.Add(acc, v)
		b[k] = acc
		if win.MaxTimestamp() <= o.core.WM {
			// A late record within the allowed lateness: fire the key's
			// updated window now; the bucket lives until its cleanup time.
			o.emitTS = win.MaxTimestamp()
			o.Emit(k, win, acc, o.out)
			o.timers.Register(cleanup, win)
		}
	}
	if dropped {
		o.late.Collect(ts, v)
	}
}

// Watermark fires every window whose end the watermark passed and drops
// the buckets whose allowed lateness expired.
func (o *bucketOperator[K, T, Acc, Out]) Watermark(wm int64) int64 {
	o.core.WM = wm
	if o.ordered {
		o.watermarkOrdered(wm)
		return wm
	}
	for {
		t, win, ok := o.timers.PopDue(wm)
		if !ok {
			break
		}
		o.fire(t, win, wm, func(bs []map[K]Acc) {
			for _, b := range bs {
				for k, acc := range b {
					o.Emit(k, win, acc, o.out)
				}
			}
		})
	}
	return wm
}

// watermarkOrdered fires the due windows by time, then window, and each
// window's keys by hash, then encoding (package ordered).
func (o *bucketOperator[K, T, Acc, Out]) watermarkOrdered(wm int64) {
	o.due.Fire(o.timers, wm, nil, byWindow, func(t int64, win Window) { o.fire(t, win, wm, o.emitSorted(win)) })
}

// emitSorted returns what fires a window's keys, of all its buckets, in
// hash order.
func (o *bucketOperator[K, T, Acc, Out]) emitSorted(win Window) func([]map[K]Acc) {
	return func(bs []map[K]Acc) {
		ks := o.keysBuf[:0]
		for _, b := range bs {
			for k := range b {
				ks = append(ks, ordered.Due[K]{Hash: o.core.Keys.Hash(k), K: k})
			}
		}
		ordered.SortByHash(ks, &o.sortBuf, ordered.ByEncoding(o.core.Keys.Codec))
		for _, k := range ks {
			s := o.core.Backend.Shard(task.KeyGroup(k.Hash, o.core.MaxParallelism))
			o.Emit(k.K, win, bs[s][k.K], o.out)
		}
		clear(ks)
		o.keysBuf = ks[:0]
	}
}

// fire handles window win's timer at t: at the window's end it emits the
// window's buckets (by shard, nil where a shard has none) with each, and
// once the allowed lateness passed it drops them.
func (o *bucketOperator[K, T, Acc, Out]) fire(t int64, win Window, wm int64, each func([]map[K]Acc)) {
	if o.firing == nil {
		o.firing = make([]map[K]Acc, o.buckets.Shards())
		o.sizes = make([]int32, o.buckets.Shards())
	}
	live := false
	for s := range o.firing {
		b, ok := o.buckets.Get(s, win)
		o.firing[s] = b
		if ok {
			live = true
			o.sizes[s] = int32(len(b))
		}
	}
	defer clear(o.firing)
	if !live {
		return
	}
	if t == win.MaxTimestamp() {
		o.emitTS = t
		each(o.firing)
	}
	if cleanup := cleanupTime(win, o.Lateness); cleanup <= wm {
		for s, b := range o.firing {
			if b != nil {
				o.buckets.Delete(s, win)
			}
		}
		o.uncache(win)
	} else {
		o.timers.Register(cleanup, win)
	}
}

// cleanupTime is when a window's state goes: the allowed lateness after its
// end.
func cleanupTime(win Window, lateness int64) int64 {
	t := win.MaxTimestamp() + lateness
	if t < win.MaxTimestamp() { // overflow near the end of time
		return dataflow.MaxWatermark
	}
	return t
}

// stamp returns the event time of the results of the firing in progress.
func (o *bucketOperator[K, T, Acc, Out]) stamp() int64 { return o.emitTS }
