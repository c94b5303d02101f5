package weir

import (
	"fmt"
	"maps"
	"reflect"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/state"
	"github.com/weir-stream/weir/internal/task"
)

// bucketOperator runs non-merging windows (tumbling, sliding). All keys of
// a window end at the same time, so state is kept per window: a bucket
// mapping each key to its accumulator, with one timer per window rather
// than per key and window. Firing a window walks its bucket and drops it
// whole, which also keeps the maps free of deleted entries.
//
// Buckets are not split by key group, so their state restores only at the
// parallelism it was taken with.
type bucketOperator[K comparable, T, Acc, Out any] struct {
	*windowNode[K, T, Acc, Out]
	task.Base
	core    *keyedCore[K]
	next    task.Collector[Out]
	late    task.Collector[T]
	buckets *state.Table[Window, map[K]Acc]
	timers  *state.Timers[Window]
	wins    []Window
	emitTS  int64
	out     func(Out)
	// The last bucket used, valid while the backend's epoch is lastEpoch:
	// consecutive records mostly share a window.
	lastWin    Window
	lastBucket map[K]Acc
	lastEpoch  uint64
	// ordered fires windows and keys in a fixed order (ordered.go).
	ordered bool
	due     orderedTimers[Window]
	keysBuf []dueTimer[K] // a window's keys with their hashes, to sort
	sortBuf []dueTimer[K]
}

func (o *bucketOperator[K, T, Acc, Out]) Snapshot() (func() []byte, error) { return o.core.Snapshot() }
func (o *bucketOperator[K, T, Acc, Out]) Restore(data []byte) error        { return o.core.Restore(data) }

func (o *bucketOperator[K, T, Acc, Out]) Open(*task.Context) error {
	wc, err := codec.For[Window]()
	if err != nil {
		return err
	}
	ac, err := codec.For[Acc]()
	if err != nil || o.core.keys.codec == nil {
		return fmt.Errorf("window state of %v keys and %v accumulators cannot be checkpointed: %v", reflect.TypeFor[K](), reflect.TypeFor[Acc](), err)
	}
	bc := state.MapCodec(o.core.keys.codec, ac)
	if o.buckets, err = state.Register(o.core.backend, "window-buckets", state.TableOptions[Window, map[K]Acc]{
		Key: wc, Value: bc, Clone: maps.Clone[map[K]Acc]}); err != nil {
		return err
	}
	o.timers, err = state.RegisterTimers[Window](o.core.backend, "window-timers", wc, nil)
	return err
}

func (o *bucketOperator[K, T, Acc, Out]) collect(v Out) { o.next.Collect(o.emitTS, v) }

// bucket returns the window's bucket, ready to be changed in place.
func (o *bucketOperator[K, T, Acc, Out]) bucket(win Window) map[K]Acc {
	epoch := o.core.backend.Epoch()
	if o.lastBucket != nil && win == o.lastWin && epoch == o.lastEpoch {
		return o.lastBucket
	}
	b, ok := o.buckets.GetMutable(0, win)
	if !ok {
		b = map[K]Acc{}
		o.buckets.PutNew(0, win, b)
		if win.MaxTimestamp() > o.core.wm {
			o.timers.Register(win.MaxTimestamp(), win)
		}
	}
	o.lastWin, o.lastBucket, o.lastEpoch = win, b, epoch
	return b
}

func (o *bucketOperator[K, T, Acc, Out]) Collect(ts int64, v T) {
	if ts == NoTimestamp {
		task.Failf("%s: record without event time in an event-time window; give the source WithTimestamps", o.core.name)
	}
	k := o.key(v)
	o.wins = o.assigner.Assign(o.wins[:0], ts)
	dropped := true
	for _, win := range o.wins {
		cleanup := cleanupTime(win, o.lateness)
		if cleanup <= o.core.wm {
			continue // the window is gone
		}
		dropped = false
		b := o.bucket(win)
		acc, ok := b[k]
		if !ok {
			acc = o.create()
		}
		acc = o.add(acc, v)
		b[k] = acc
		if win.MaxTimestamp() <= o.core.wm {
			// A late record within the allowed lateness: fire the key's
			// updated window now; the bucket lives until its cleanup time.
			o.emitTS = win.MaxTimestamp()
			o.emit(k, win, acc, o.out)
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
	o.core.wm = wm
	if o.ordered {
		o.watermarkOrdered(wm)
		return wm
	}
	for {
		t, win, ok := o.timers.PopDue(wm)
		if !ok {
			break
		}
		o.fire(t, win, wm, func(b map[K]Acc) {
			for k, acc := range b {
				o.emit(k, win, acc, o.out)
			}
		})
	}
	return wm
}

// watermarkOrdered fires the due windows by time, then window, and each
// window's keys by hash, then encoding (ordered.go).
func (o *bucketOperator[K, T, Acc, Out]) watermarkOrdered(wm int64) {
	o.due.fire(o.timers, wm, nil, byWindow, func(t int64, win Window) { o.fire(t, win, wm, o.emitSorted(win)) })
}

// emitSorted returns what fires a bucket's keys in hash order.
func (o *bucketOperator[K, T, Acc, Out]) emitSorted(win Window) func(map[K]Acc) {
	return func(b map[K]Acc) {
		ks := o.keysBuf[:0]
		for k := range b {
			ks = append(ks, dueTimer[K]{hash: o.keys.hash(k), k: k})
		}
		sortByHash(ks, &o.sortBuf, byEncoding(o.keys.codec))
		for _, k := range ks {
			o.emit(k.k, win, b[k.k], o.out)
		}
		clear(ks)
		o.keysBuf = ks[:0]
	}
}

// fire handles window win's timer at t: at the window's end it emits the
// bucket with each, and once the allowed lateness passed it drops it.
func (o *bucketOperator[K, T, Acc, Out]) fire(t int64, win Window, wm int64, each func(map[K]Acc)) {
	b, live := o.buckets.Get(0, win)
	if !live {
		return
	}
	if t == win.MaxTimestamp() {
		o.emitTS = t
		each(b)
	}
	if cleanup := cleanupTime(win, o.lateness); cleanup <= wm {
		o.buckets.Delete(0, win)
		if o.lastBucket != nil && o.lastWin == win {
			o.lastBucket = nil
		}
	} else {
		o.timers.Register(cleanup, win)
	}
}

// cleanupTime is when a window's state goes: the allowed lateness after its
// end.
func cleanupTime(win Window, lateness int64) int64 {
	t := win.MaxTimestamp() + lateness
	if t < win.MaxTimestamp() { // overflow near the end of time
		return task.MaxWatermark
	}
	return t
}
