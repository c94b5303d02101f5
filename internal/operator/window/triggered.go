package window

import (
	"cmp"
	"fmt"
	"math"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/operator/ordered"
	"github.com/weir-stream/weir/internal/state"
	"github.com/weir-stream/weir/internal/task"
)

// trigKey addresses one state of a trigger for one window of one key.
type trigKey[K comparable] struct {
	Key  K
	Win  Window
	Name string
}

// triggerOperator runs non-merging windows with a trigger and, if given,
// an evictor, as Flink's WindowOperator and EvictingWindowOperator: a
// record is added to each of its windows, then the trigger decides for
// each whether it fires and purges; the trigger's timers, per key and
// window, do the same when they fire. A window's state goes at its
// cleanup time (event time: its end plus the allowed lateness;
// processing time: its end; the global window: never), when the
// trigger's Clear is called too.
//
// Without an evictor a window keeps an accumulator; with one it keeps
// its records with their event times, folded into an accumulator when it
// fires.
type triggerOperator[K comparable, T, Acc, Out any] struct {
	*Node[K, T, Acc, Out]
	task.Base
	core     *keyed.Core[K]
	next     task.Collector[Out]
	late     task.Collector[T]
	contents *state.Table[winKey[K], Acc]          // without an evictor
	elems    *state.Table[winKey[K], []Stamped[T]] // with one
	tstate   *state.Table[trigKey[K], []byte]
	events   *state.Timers[winKey[K]]
	procs    *state.Timers[winKey[K]]
	wins     []Window
	emitTS   int64
	out      func(Out)
	cur      winKey[K] // the window the trigger context addresses
	ordered  bool      // fire event-time timers in a fixed order (package ordered)
	due      ordered.Timers[winKey[K]]
}

func (o *triggerOperator[K, T, Acc, Out]) Snapshot(so task.SnapshotOptions) (func(dst []byte) (task.Encoded, error), error) {
	return o.core.Snapshot(so)
}

// Settle lets an LSM state backend write its cached changes through.
func (o *triggerOperator[K, T, Acc, Out]) Settle() error { return o.core.Settle() }

// Close releases the state backend.
func (o *triggerOperator[K, T, Acc, Out]) Close() error              { return o.core.Close() }
func (o *triggerOperator[K, T, Acc, Out]) Restore(data []byte) error { return o.core.Restore(data) }

// KeyedCore returns the operator's keyed core, for a hand-over.
func (o *triggerOperator[K, T, Acc, Out]) KeyedCore() *keyed.Core[K] { return o.core }

// Adopt takes over the keyed state of retired operators before Open.
func (o *triggerOperator[K, T, Acc, Out]) Adopt(a task.Adoption) error { return o.core.Adopt(a) }

func (o *triggerOperator[K, T, Acc, Out]) Open(*task.Context) error {
	c := o.core
	if err := c.Backend.Open(); err != nil {
		return err
	}
	wkc, err := codec.For[winKey[K]]()
	if err != nil {
		return fmt.Errorf("window state of %T keys cannot be checkpointed: %w", o.cur.Key, err)
	}
	tkc, err := codec.For[trigKey[K]]()
	if err != nil {
		return err
	}
	bc, err := codec.For[[]byte]()
	if err != nil {
		return err
	}
	wkGroup := func(wk winKey[K]) int { return c.KeyGroup(wk.Key) }
	if o.Evictor == nil {
		ac, err := codec.For[Acc]()
		if err != nil {
			return fmt.Errorf("window accumulators cannot be checkpointed: %w", err)
		}
		o.contents, err = state.Register(c.Backend, "window-contents", state.TableOptions[winKey[K], Acc]{
			Key: wkc, Value: ac, KeyGroup: wkGroup, InPlace: state.Mutable[Acc]()})
		if err != nil {
			return err
		}
	} else {
		ec, err := codec.For[[]Stamped[T]]()
		if err != nil {
			return fmt.Errorf("window records cannot be checkpointed (an evictor keeps them): %w", err)
		}
		o.elems, err = state.Register(c.Backend, "window-elements", state.TableOptions[winKey[K], []Stamped[T]]{
			Key: wkc, Value: ec, KeyGroup: wkGroup, InPlace: true})
		if err != nil {
			return err
		}
	}
	if o.tstate, err = state.Register(c.Backend, "trigger-state", state.TableOptions[trigKey[K], []byte]{
		Key: tkc, Value: bc, KeyGroup: func(tk trigKey[K]) int { return c.KeyGroup(tk.Key) }}); err != nil {
		return err
	}
	if o.events, err = state.RegisterTimers(c.Backend, "trigger-timers-event", wkc, wkGroup); err != nil {
		return err
	}
	o.procs, err = state.RegisterTimers(c.Backend, "trigger-timers-processing", wkc, wkGroup)
	return err
}

func (o *triggerOperator[K, T, Acc, Out]) collect(v Out) { o.next.Collect(o.emitTS, v) }

func (o *triggerOperator[K, T, Acc, Out]) Collect(ts int64, v T) {
	k := o.Key(v)
	o.core.SetKey(k)
	o.core.TS = ts
	switch o.Domain {
	case EventTime:
		if ts == dataflow.MinWatermark {
			task.Failf("%s: record without event time in an event-time window; give the source WithTimestamps", o.core.Name)
		}
		o.wins = o.Assign(o.wins[:0], ts)
	case ProcessingTime:
		o.wins = o.Assign(o.wins[:0], o.core.Now())
	case Global:
		o.wins = append(o.wins[:0], GlobalWindow)
	}
	skipped := true
	for _, win := range o.wins {
		if o.Domain == EventTime && cleanupTime(win, o.Lateness) <= o.core.WM {
			continue // the window is gone
		}
		skipped = false
		wk := winKey[K]{k, win}
		o.add(wk, ts, v)
		o.cur = wk
		r, err := o.Trigger.OnElement(o, v, ts, win)
		o.result(wk, r, err, ts, "on a record")
		o.registerCleanup(wk)
	}
	if skipped && o.Domain == EventTime {
		o.late.Collect(ts, v)
	}
}

// add adds record v with event time ts to window wk.
func (o *triggerOperator[K, T, Acc, Out]) add(wk winKey[K], ts int64, v T) {
	sh := o.core.Shard
	if o.contents != nil {
		acc, ok := o.contents.Get(sh, wk)
		if !ok {
			acc = o.Create()
		}
		o.contents.Put(sh, wk, o.Add(acc, v))
		return
	}
	l, _ := o.elems.Get(sh, wk)
	o.elems.Put(sh, wk, append(l, Stamped[T]{Timestamp: ts, Value: v}))
}

// result acts on the trigger's result r for window wk: fires it, with
// its results stamped at the window's max timestamp (or, for the global
// window, at the time of what fired it, at), and purges it.
func (o *triggerOperator[K, T, Acc, Out]) result(wk winKey[K], r Result, err error, at int64, what string) {
	if err != nil {
		task.Fail(fmt.Errorf("%s: trigger %s, key %v, window [%d, %d): %w", o.core.Name, what, wk.Key, wk.Win.Start, wk.Win.End, err))
	}
	if r.Fires() {
		o.emitTS = wk.Win.MaxTimestamp()
		if wk.Win == GlobalWindow {
			o.emitTS = at
		}
		o.fire(wk)
	}
	if r.Purges() {
		o.purge(wk)
	}
}

// fire emits window wk's result, if it holds anything; with an evictor
// it evicts before and after.
func (o *triggerOperator[K, T, Acc, Out]) fire(wk winKey[K]) {
	sh := o.core.Shard
	if o.contents != nil {
		if acc, ok := o.contents.Get(sh, wk); ok {
			o.Emit(wk.Key, wk.Win, acc, o.out)
		}
		return
	}
	l, ok := o.elems.Get(sh, wk)
	if !ok {
		return
	}
	o.cur = wk
	l = o.Evictor.EvictBefore(o, l, wk.Win)
	if len(l) > 0 {
		acc := o.Create()
		for _, e := range l {
			acc = o.Add(acc, e.Value)
		}
		o.Emit(wk.Key, wk.Win, acc, o.out)
	}
	l = o.Evictor.EvictAfter(o, l, wk.Win)
	if len(l) == 0 {
		o.elems.Delete(sh, wk)
	} else {
		o.elems.Put(sh, wk, l)
	}
}

// purge drops window wk's contents.
func (o *triggerOperator[K, T, Acc, Out]) purge(wk winKey[K]) {
	if o.contents != nil {
		o.contents.Delete(o.core.Shard, wk)
	} else {
		o.elems.Delete(o.core.Shard, wk)
	}
}

// cleanup returns when window win's state goes and whether it does.
func (o *triggerOperator[K, T, Acc, Out]) cleanup(win Window) (int64, bool) {
	switch {
	case win.End == math.MaxInt64:
		return 0, false
	case o.Domain == EventTime:
		return cleanupTime(win, o.Lateness), true
	}
	return win.MaxTimestamp(), true
}

func (o *triggerOperator[K, T, Acc, Out]) registerCleanup(wk winKey[K]) {
	t, ok := o.cleanup(wk.Win)
	if !ok {
		return
	}
	if o.Domain == EventTime {
		o.events.Register(t, wk)
	} else {
		o.procs.Register(t, wk)
	}
}

// clearAll drops window wk's contents and lets the trigger clear its
// timers and state.
func (o *triggerOperator[K, T, Acc, Out]) clearAll(wk winKey[K]) {
	o.purge(wk)
	o.cur = wk
	if err := o.Trigger.Clear(o, wk.Win); err != nil {
		task.Fail(fmt.Errorf("%s: clearing trigger of key %v, window [%d, %d): %w", o.core.Name, wk.Key, wk.Win.Start, wk.Win.End, err))
	}
}

// Watermark fires the due event-time timers.
func (o *triggerOperator[K, T, Acc, Out]) Watermark(wm int64) int64 {
	o.core.WM = wm
	if o.ordered {
		enc := ordered.ByEncoding(o.core.Keys.Codec)
		o.due.Fire(o.events, wm, func(wk winKey[K]) uint64 { return o.core.Keys.Hash(wk.Key) },
			func(a, b winKey[K]) int { return cmp.Or(enc(a.Key, b.Key), byWindow(a.Win, b.Win)) },
			o.onEventTime)
		return wm
	}
	for {
		t, wk, ok := o.events.PopDue(wm)
		if !ok {
			return wm
		}
		o.onEventTime(t, wk)
	}
}

func (o *triggerOperator[K, T, Acc, Out]) onEventTime(t int64, wk winKey[K]) {
	o.core.SetKey(wk.Key)
	o.core.TS = t
	o.cur = wk
	r, err := o.Trigger.OnEventTime(o, t, wk.Win)
	o.result(wk, r, err, t, "on an event-time timer")
	if c, ok := o.cleanup(wk.Win); ok && o.Domain == EventTime && c == t {
		o.clearAll(wk)
	}
}

func (o *triggerOperator[K, T, Acc, Out]) onProcessingTime(t int64, wk winKey[K]) {
	o.core.SetKey(wk.Key)
	o.core.TS = t
	o.cur = wk
	r, err := o.Trigger.OnProcessingTime(o, t, wk.Win)
	o.result(wk, r, err, t, "on a processing-time timer")
	if c, ok := o.cleanup(wk.Win); ok && o.Domain == ProcessingTime && c == t {
		o.clearAll(wk)
	}
}

func (o *triggerOperator[K, T, Acc, Out]) NextProcessingTime() (int64, bool) { return o.procs.Next() }

func (o *triggerOperator[K, T, Acc, Out]) FireProcessingTime(now int64) {
	for {
		t, wk, ok := o.procs.PopDue(now)
		if !ok {
			return
		}
		o.onProcessingTime(t, wk)
	}
}

// EndInput fires, once each, the processing-time timers pending when a
// bounded input ends, as if the clock had passed them: processing-time
// windows emit what they hold rather than lose it. Timers registered
// while they fire do not fire.
func (o *triggerOperator[K, T, Acc, Out]) EndInput() error {
	fireAll(o.procs, o.onProcessingTime)
	return nil
}

// The trigger context, addressing window o.cur of the current key.

func (o *triggerOperator[K, T, Acc, Out]) CurrentWatermark() int64      { return o.core.WM }
func (o *triggerOperator[K, T, Acc, Out]) CurrentProcessingTime() int64 { return o.core.Now() }
func (o *triggerOperator[K, T, Acc, Out]) RegisterEventTimer(t int64)   { o.events.Register(t, o.cur) }
func (o *triggerOperator[K, T, Acc, Out]) DeleteEventTimer(t int64)     { o.events.Delete(t, o.cur) }
func (o *triggerOperator[K, T, Acc, Out]) RegisterProcessingTimer(t int64) {
	o.procs.Register(t, o.cur)
}
func (o *triggerOperator[K, T, Acc, Out]) DeleteProcessingTimer(t int64) { o.procs.Delete(t, o.cur) }

func (o *triggerOperator[K, T, Acc, Out]) State(name string) ([]byte, bool) {
	return o.tstate.Get(o.core.Shard, trigKey[K]{o.cur.Key, o.cur.Win, name})
}

func (o *triggerOperator[K, T, Acc, Out]) SetState(name string, v []byte) {
	o.tstate.Put(o.core.Shard, trigKey[K]{o.cur.Key, o.cur.Win, name}, v)
}

func (o *triggerOperator[K, T, Acc, Out]) ClearState(name string) {
	o.tstate.Delete(o.core.Shard, trigKey[K]{o.cur.Key, o.cur.Win, name})
}

// stamp returns the event time of the results of the firing in progress.
func (o *triggerOperator[K, T, Acc, Out]) stamp() int64 { return o.emitTS }
