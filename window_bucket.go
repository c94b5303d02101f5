package weir

import (
	"github.com/weir-stream/weir/internal/state"
	"github.com/weir-stream/weir/internal/task"
)

// bucketOperator runs non-merging windows (tumbling, sliding). All keys of
// a window end at the same time, so state is kept per window: a bucket
// mapping each key to its accumulator, with one timer per window rather
// than per key and window. Firing a window walks its bucket and drops it
// whole, which also keeps the maps free of deleted entries.
type bucketOperator[K comparable, T, Acc, Out any] struct {
	*windowNode[K, T, Acc, Out]
	task.Base
	next    task.Collector[Out]
	late    task.Collector[T]
	wm      int64
	backend *state.Backend
	buckets *state.Table[Window, map[K]Acc]
	timers  *state.Timers[Window]
	wins    []Window
	emitTS  int64
	out     func(Out)
	name    string
	// The last bucket used: consecutive records mostly share a window.
	lastWin    Window
	lastBucket map[K]Acc
}

func (o *bucketOperator[K, T, Acc, Out]) collect(v Out) { o.next.Collect(o.emitTS, v) }

func (o *bucketOperator[K, T, Acc, Out]) bucket(win Window) map[K]Acc {
	if o.lastBucket != nil && win == o.lastWin {
		return o.lastBucket
	}
	b, ok := o.buckets.Get(win)
	if !ok {
		b = map[K]Acc{}
		o.buckets.Put(win, b)
		if win.MaxTimestamp() > o.wm {
			o.timers.Register(win.MaxTimestamp(), win)
		}
	}
	o.lastWin, o.lastBucket = win, b
	return b
}

func (o *bucketOperator[K, T, Acc, Out]) Collect(ts int64, v T) {
	if ts == NoTimestamp {
		task.Failf("%s: record without event time in an event-time window; give the source WithTimestamps", o.name)
	}
	k := o.key(v)
	o.wins = o.assigner.Assign(o.wins[:0], ts)
	dropped := true
	for _, win := range o.wins {
		cleanup := cleanupTime(win, o.lateness)
		if cleanup <= o.wm {
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
		if win.MaxTimestamp() <= o.wm {
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
	o.wm = wm
	for {
		t, win, ok := o.timers.PopDue(wm)
		if !ok {
			break
		}
		b, live := o.buckets.Get(win)
		if !live {
			continue
		}
		if t == win.MaxTimestamp() {
			o.emitTS = t
			for k, acc := range b {
				o.emit(k, win, acc, o.out)
			}
		}
		if cleanup := cleanupTime(win, o.lateness); cleanup <= wm {
			o.buckets.Delete(win)
			if o.lastBucket != nil && o.lastWin == win {
				o.lastBucket = nil
			}
		} else {
			o.timers.Register(cleanup, win)
		}
	}
	return wm
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
