package window

import (
	"math"

	"github.com/weir-stream/weir/internal/state"
)

// procSessionOperator runs session windows on processing time, as Flink's
// ProcessingTimeSessionWindows: the session operator assigning each
// record the window [now, now+gap) of the clock at which it takes it,
// merging a key's windows as on event time, and firing a session when
// the clock passes its end, with its results stamped at the window's
// max timestamp. Its timers are processing-time timers, checkpointed
// per key and window with the sessions and their contents, so they move
// with their key group at a rescale. No record is late; the watermark
// fires nothing. When a bounded input ends, the sessions still open fire
// at once.
type procSessionOperator[K comparable, T, Acc, Out any] struct {
	*sessionOperator[K, T, Acc, Out]
}

// Watermark records the watermark; sessions on the clock ignore it.
func (o procSessionOperator[K, T, Acc, Out]) Watermark(wm int64) int64 {
	o.core.WM = wm
	return wm
}

func (o procSessionOperator[K, T, Acc, Out]) NextProcessingTime() (int64, bool) {
	return o.timers.Next()
}

// FireProcessingTime fires the sessions whose end the clock, at now,
// passed, and drops them.
func (o procSessionOperator[K, T, Acc, Out]) FireProcessingTime(now int64) {
	for {
		t, wk, ok := o.timers.PopDue(now)
		if !ok {
			return
		}
		o.onTimer(t, wk, now)
	}
}

// EndInput fires the sessions still open when a bounded input ends, as
// if the clock had passed their ends, rather than lose them.
func (o procSessionOperator[K, T, Acc, Out]) EndInput() error {
	fireAll(o.timers, func(t int64, wk winKey[K]) { o.onTimer(t, wk, math.MaxInt64) })
	return nil
}

// fireAll calls fire, once each and in time order, for the timers
// pending in timers, as if their time had come. Timers registered while
// they fire do not fire.
func fireAll[K comparable](timers *state.Timers[winKey[K]], fire func(t int64, wk winKey[K])) {
	type due struct {
		t  int64
		wk winKey[K]
	}
	var all []due
	for {
		t, wk, ok := timers.PopDue(math.MaxInt64)
		if !ok {
			break
		}
		all = append(all, due{t, wk})
	}
	for _, d := range all {
		fire(d.t, d.wk)
	}
}
