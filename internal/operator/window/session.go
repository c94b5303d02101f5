package window

import (
	"slices"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/operator/ordered"
	"github.com/weir-stream/weir/internal/state"
	"github.com/weir-stream/weir/internal/task"
)

// winKey addresses one window of one key in state and timers.
type winKey[K comparable] struct {
	Key K
	Win Window
}

// sessionOperator runs merging (session) windows, whose bounds differ per
// key: state and timers are kept per key and window, and a key's active
// windows merge when a record bridges them. On event time its timers
// fire with the watermark; on processing time (Domain) records are
// assigned by the clock and procSessionOperator fires the timers on it.
type sessionOperator[K comparable, T, Acc, Out any] struct {
	*Node[K, T, Acc, Out]
	task.Base
	core     *keyed.Core[K]
	next     task.Collector[Out]
	late     task.Collector[T]
	contents *state.Table[winKey[K], Acc]
	sessions *state.Table[K, []Window] // active windows per key
	timers   *state.Timers[winKey[K]]
	wins     []Window // scratch
	emitTS   int64
	out      func(Out)
	ordered  bool // fire in a fixed order (package ordered)
	due      ordered.Timers[winKey[K]]
}

func (o *sessionOperator[K, T, Acc, Out]) Snapshot(so task.SnapshotOptions) (func(dst []byte) (task.Encoded, error), error) {
	return o.core.Snapshot(so)
}

// Settle lets an LSM state backend write its cached changes through.
func (o *sessionOperator[K, T, Acc, Out]) Settle() error { return o.core.Settle() }

// Close releases the state backend.
func (o *sessionOperator[K, T, Acc, Out]) Close() error              { return o.core.Close() }
func (o *sessionOperator[K, T, Acc, Out]) Restore(data []byte) error { return o.core.Restore(data) }

// KeyedCore returns the operator's keyed core, for a hand-over.
func (o *sessionOperator[K, T, Acc, Out]) KeyedCore() *keyed.Core[K] { return o.core }

// Adopt takes over the keyed state of retired operators before Open.
func (o *sessionOperator[K, T, Acc, Out]) Adopt(a task.Adoption) error { return o.core.Adopt(a) }

func (o *sessionOperator[K, T, Acc, Out]) Open(*task.Context) error {
	c := o.core
	wkc, err := codec.For[winKey[K]]()
	if err != nil {
		return err
	}
	ac, err := codec.For[Acc]()
	if err != nil {
		return err
	}
	wlc, err := codec.For[[]Window]()
	if err != nil {
		return err
	}
	wkGroup := func(wk winKey[K]) int { return c.KeyGroup(wk.Key) }
	if o.contents, err = state.Register(c.Backend, "window-contents", state.TableOptions[winKey[K], Acc]{
		Key: wkc, Value: ac, KeyGroup: wkGroup, InPlace: state.Mutable[Acc]()}); err != nil {
		return err
	}
	if o.sessions, err = state.Register(c.Backend, "window-sessions", state.TableOptions[K, []Window]{
		Key: c.Keys.Codec, Value: wlc, KeyGroup: c.KeyGroup}); err != nil {
		return err
	}
	name := "window-timers"
	if o.Domain == ProcessingTime {
		name = "window-timers-processing"
	}
	o.timers, err = state.RegisterTimers(c.Backend, name, wkc, wkGroup)
	return err
}

// now returns how far the windows' time has got: the watermark, or the
// clock for processing-time sessions.
func (o *sessionOperator[K, T, Acc, Out]) now() int64 {
	if o.Domain == ProcessingTime {
		return o.core.Now()
	}
	return o.core.WM
}

// cleanup returns when window win's state goes: its end plus the allowed
// lateness on event time, its end on processing time, where no record is
// late.
func (o *sessionOperator[K, T, Acc, Out]) cleanup(win Window) int64 {
	if o.Domain == ProcessingTime {
		return win.MaxTimestamp()
	}
	return cleanupTime(win, o.Lateness)
}

func (o *sessionOperator[K, T, Acc, Out]) collect(v Out) { o.next.Collect(o.emitTS, v) }

func (o *sessionOperator[K, T, Acc, Out]) Collect(ts int64, v T) {
	now := o.now()
	at := ts
	if o.Domain == ProcessingTime {
		at = now
	} else if ts == dataflow.MinWatermark {
		task.Failf("%s: record without event time in an event-time window; give the source WithTimestamps", o.core.Name)
	}
	k := o.Key(v)
	o.core.SetKey(k)
	sh := o.core.Shard
	o.wins = o.Assign(o.wins[:0], at)
	win, merged := o.mergeSession(k, o.wins[0])
	wk := winKey[K]{k, win}
	if o.cleanup(win) <= now {
		if merged {
			o.clear(wk) // a session that ended before it began
		}
		o.late.Collect(ts, v)
		return
	}
	acc, ok := o.contents.Get(sh, wk)
	if !ok {
		acc = o.Create()
	}
	acc = o.Add(acc, v)
	o.contents.Put(sh, wk, acc)
	if win.MaxTimestamp() <= now {
		// A late record within the allowed lateness: fire the updated
		// window now; its state lives until the cleanup time.
		o.fire(wk, acc)
		o.timers.Register(o.cleanup(win), wk)
	} else if !ok || merged {
		o.timers.Register(win.MaxTimestamp(), wk)
	}
}

// mergeSession merges win into the key's active sessions and returns the
// window that now holds it, moving the merged windows' contents to it and
// dropping their timers. It reports whether any window was merged.
func (o *sessionOperator[K, T, Acc, Out]) mergeSession(k K, win Window) (Window, bool) {
	sh := o.core.Shard
	active, _ := o.sessions.Get(sh, k)
	merged := win
	var keep, absorbed []Window
	for _, a := range active {
		if a.intersects(merged) {
			merged = merged.cover(a)
			absorbed = append(absorbed, a)
		} else {
			keep = append(keep, a)
		}
	}
	// Covering may reach windows that did not touch the new record's.
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(keep); i++ {
			if keep[i].intersects(merged) {
				merged = merged.cover(keep[i])
				absorbed = append(absorbed, keep[i])
				keep = slices.Delete(keep, i, i+1)
				changed = true
				i--
			}
		}
	}
	if len(absorbed) > 0 {
		acc := o.Create()
		has := false
		for _, a := range absorbed {
			wk := winKey[K]{k, a}
			if c, ok := o.contents.Get(sh, wk); ok {
				if has {
					acc = o.Merge(acc, c)
				} else {
					acc, has = c, true
				}
				o.contents.Delete(sh, wk)
			}
			o.timers.Delete(a.MaxTimestamp(), wk)
			o.timers.Delete(o.cleanup(a), wk)
		}
		if has {
			o.contents.Put(sh, winKey[K]{k, merged}, acc)
		}
	}
	o.sessions.Put(sh, k, append(keep, merged)) // keep is a fresh slice
	return merged, len(absorbed) > 0
}

func (o *sessionOperator[K, T, Acc, Out]) fire(wk winKey[K], acc Acc) {
	o.emitTS = wk.Win.MaxTimestamp()
	o.Emit(wk.Key, wk.Win, acc, o.out)
}

// Watermark fires the sessions whose end the watermark passed and clears
// those whose allowed lateness expired.
func (o *sessionOperator[K, T, Acc, Out]) Watermark(wm int64) int64 {
	o.core.WM = wm
	if o.ordered {
		o.watermarkOrdered(wm)
		return wm
	}
	for {
		t, wk, ok := o.timers.PopDue(wm)
		if !ok {
			break
		}
		o.onTimer(t, wk, wm)
	}
	return wm
}

// watermarkOrdered fires the due timers by time, then key hash and
// encoding, then window (package ordered).
func (o *sessionOperator[K, T, Acc, Out]) watermarkOrdered(wm int64) {
	enc := ordered.ByEncoding(o.core.Keys.Codec)
	o.due.Fire(o.timers, wm, func(wk winKey[K]) uint64 { return o.core.Keys.Hash(wk.Key) },
		func(a, b winKey[K]) int {
			if c := enc(a.Key, b.Key); c != 0 {
				return c
			}
			return byWindow(a.Win, b.Win)
		},
		func(t int64, wk winKey[K]) { o.onTimer(t, wk, wm) })
}

// onTimer handles the timer of window wk at t, with the windows' time
// at now: at the window's end it fires it, and once the allowed lateness
// passed it drops it.
func (o *sessionOperator[K, T, Acc, Out]) onTimer(t int64, wk winKey[K], now int64) {
	o.core.SetKey(wk.Key)
	acc, live := o.contents.Get(o.core.Shard, wk)
	if !live {
		return
	}
	if t == wk.Win.MaxTimestamp() {
		o.fire(wk, acc)
	}
	if cleanup := o.cleanup(wk.Win); cleanup <= now {
		o.clear(wk)
	} else {
		o.timers.Register(cleanup, wk)
	}
}

func (o *sessionOperator[K, T, Acc, Out]) clear(wk winKey[K]) {
	sh := o.core.Shard
	o.contents.Delete(sh, wk)
	active, _ := o.sessions.Get(sh, wk.Key)
	if i := slices.Index(active, wk.Win); i >= 0 {
		active = slices.Delete(slices.Clone(active), i, i+1)
	}
	if len(active) == 0 {
		o.sessions.Delete(sh, wk.Key)
	} else {
		o.sessions.Put(sh, wk.Key, active)
	}
}

// stamp returns the event time of the results of the firing in progress.
func (o *sessionOperator[K, T, Acc, Out]) stamp() int64 { return o.emitTS }
