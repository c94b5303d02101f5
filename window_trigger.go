package weir

import (
	"errors"
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/operator/window"
)

// This file is what chooses a window's time and trigger: processing-time
// assigners, the global window with count windows over it, and a
// WindowedStream's Trigger and Evictor.

// GlobalWindow is the one window of GlobalWindows (and count windows),
// holding all records of a key.
var GlobalWindow = Window(window.GlobalWindow)

// TumblingProcessingTime returns fixed-size windows, as Tumbling, of the
// operator's clock: a record belongs to the window of the time at which
// the window operator takes it, whatever its event time, and the window
// fires when the clock passes its end (ProcessingTimeTrigger). The
// records need no event time. Results depend on timing, so a run and its
// replay after a failure may window records differently; see
// docs/windows.md.
func TumblingProcessingTime(size time.Duration, offset ...time.Duration) WindowAssigner {
	return &procTime{sliding{window.Sliding{Size: size.Milliseconds(), Slide: size.Milliseconds(), Offset: off(offset)}}}
}

// SlidingProcessingTime returns windows of size starting every slide, as
// Sliding, of the operator's clock (see TumblingProcessingTime).
func SlidingProcessingTime(size, slide time.Duration, offset ...time.Duration) WindowAssigner {
	return &procTime{sliding{window.Sliding{Size: size.Milliseconds(), Slide: slide.Milliseconds(), Offset: off(offset)}}}
}

// procTime is a sliding assigner on processing time.
type procTime struct{ sliding }

func (p *procTime) String() string        { return "processing-time " + p.sliding.String() }
func (p *procTime) domain() window.Domain { return window.ProcessingTime }

// SessionProcessingTime returns session windows, as Session, of the
// operator's clock (Flink's ProcessingTimeSessionWindows.withGap): a
// record opens the window [now, now+gap) of the time at which the window
// operator takes it, whatever its event time; a key's windows merge when
// they overlap or touch, so records of a key arriving no more than gap
// apart form one session; and a session fires when the clock passes its
// end, its results carrying the window's MaxTimestamp. The records need
// no event time. Sessions still open when a bounded input ends fire
// then. They take no Trigger, Evictor or AllowedLateness. Results depend
// on timing, as for TumblingProcessingTime; see docs/windows.md.
func SessionProcessingTime(gap time.Duration) WindowAssigner {
	return &procSession{session{window.Session{Gap: gap.Milliseconds()}}}
}

// procSession is a session assigner on processing time.
type procSession struct{ session }

func (p *procSession) String() string        { return "processing-time " + p.session.String() }
func (p *procSession) domain() window.Domain { return window.ProcessingTime }

// GlobalWindows puts all records of a key into one window, GlobalWindow,
// which never ends: it needs a Trigger (and its state goes only when the
// trigger purges it). Its results carry the event time of what fired
// the window: the record, or the timer's time.
func GlobalWindows() WindowAssigner { return globalWindows{} }

type globalWindows struct{}

func (globalWindows) Assign(dst []Window, _ int64) []Window { return append(dst, GlobalWindow) }
func (globalWindows) Merging() bool                         { return false }
func (globalWindows) String() string                        { return "global" }
func (globalWindows) domain() window.Domain                 { return window.Global }

// CountWindow groups each key's records by count, as Flink's
// countWindow: CountWindow(ks, size) fires every size records of a key
// with those records and starts afresh (tumbling: GlobalWindows with a
// PurgingTrigger of CountTrigger(size)); CountWindow(ks, size, slide)
// fires every slide records with the last size records of the key, or
// all of them while there are fewer (sliding: GlobalWindows with
// CountTrigger(slide) and CountEvictor(size)). The records left over
// when a bounded input ends, too few to fire, are not emitted. Results
// carry the event time of the record that fired the window, and the
// window GlobalWindow. Count windows are deterministic: they depend
// only on the order of each key's records.
func CountWindow[K comparable, T any](ks KeyedStream[K, T], size int64, slide ...int64) WindowedStream[K, T] {
	w := WindowBy(ks, GlobalWindows())
	if len(slide) > 1 || size < 1 || len(slide) == 1 && (slide[0] < 1 || slide[0] > size) {
		ks.s.p.setErr(fmt.Errorf("CountWindow takes a size and at most one slide, with 1 <= slide <= size; got size %d, slide %v", size, slide))
		return w
	}
	if len(slide) == 0 {
		return w.Trigger(PurgingTrigger(CountTrigger[T](size)))
	}
	return w.Trigger(CountTrigger[T](slide[0])).Evictor(CountEvictor[T](size))
}

// Trigger sets what decides when the windows fire and purge, instead of
// the assigner's default (EventTimeTrigger for event-time windows,
// ProcessingTimeTrigger for processing-time ones). Session windows take
// no trigger: their windows merge, which the built-in session operator
// handles by itself; the pipeline fails to build.
func (w WindowedStream[K, T]) Trigger(t Trigger[T]) WindowedStream[K, T] {
	if v, ok := t.(interface{ validate() error }); ok {
		if err := v.validate(); err != nil {
			w.ks.s.p.setErr(err)
		}
	}
	w.trigger = t
	return w
}

// Evictor sets what removes records from a window when it fires. The
// window then keeps its records rather than an accumulator. Session
// windows take no evictor.
func (w WindowedStream[K, T]) Evictor(e Evictor[T]) WindowedStream[K, T] {
	if v, ok := e.(interface{ validate() error }); ok {
		if err := v.validate(); err != nil {
			w.ks.s.p.setErr(err)
		}
	}
	w.evictor = e
	return w
}

// errMergingTrigger refuses a trigger or evictor on merging windows.
var errMergingTrigger = errors.New("session windows take no custom trigger or evictor: sessions merge, and weir supports no trigger merging (Flink's canMerge/onMerge); use the default trigger, or a Process function with timers")

// domainOf returns the time a's windows are on.
func domainOf(a WindowAssigner) window.Domain {
	if d, ok := a.(interface{ domain() window.Domain }); ok {
		return d.domain()
	}
	return window.EventTime
}

// configure sets the trigger, evictor and domain of a window node from
// w, and returns the event-time role of the operator, with what it is
// for errors.
func configure[K comparable, T, Acc, Out any](w WindowedStream[K, T], node *window.Node[K, T, Acc, Out]) (timeRole, string, error) {
	node.Domain = domainOf(w.assigner)
	if w.trigger != nil || w.evictor != nil {
		if w.assigner.Merging() {
			return 0, "", errMergingTrigger
		}
		if w.evictor != nil {
			node.Evictor = evictorAdapter[T]{w.evictor}
		}
	}
	t := w.trigger
	switch node.Domain {
	case window.EventTime:
		if t == nil && w.evictor != nil {
			t = EventTimeTrigger[T]()
		}
		if t != nil {
			node.Trigger = triggerAdapter[T]{t}
		}
		return needsTime, "event-time window " + w.assigner.String(), nil
	case window.ProcessingTime:
		if w.assigner.Merging() {
			return stampsTime, "", nil // the session operator fires on the clock by itself
		}
		if t == nil {
			t = ProcessingTimeTrigger[T]()
		}
		node.Trigger = triggerAdapter[T]{t}
		return stampsTime, "", nil
	}
	if t == nil {
		return 0, "", fmt.Errorf("%s windows need a trigger (WindowedStream.Trigger), or use CountWindow", w.assigner)
	}
	node.Trigger = triggerAdapter[T]{t}
	return passesTime, "", nil
}
