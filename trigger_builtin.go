package weir

import (
	"fmt"
	"math"
	"time"
)

// The built-in triggers, as Flink's. Each is generic in the record type,
// which Go cannot infer from the method they are passed to: write
// weir.CountTrigger[Click](100).

// EventTimeTrigger fires a window when the watermark passes its end, and
// at once for each record added within the allowed lateness after that.
// It is the default trigger of event-time windows.
func EventTimeTrigger[T any]() Trigger[T] { return eventTimeTrigger[T]{} }

type eventTimeTrigger[T any] struct{}

func (eventTimeTrigger[T]) OnElement(ctx TriggerContext, _ T, _ int64, w Window) (TriggerResult, error) {
	if w.MaxTimestamp() <= ctx.CurrentWatermark() {
		return TriggerFire, nil // late, within the allowed lateness
	}
	ctx.RegisterEventTimer(w.MaxTimestamp())
	return TriggerContinue, nil
}

func (eventTimeTrigger[T]) OnEventTime(_ TriggerContext, t int64, w Window) (TriggerResult, error) {
	if t == w.MaxTimestamp() {
		return TriggerFire, nil
	}
	return TriggerContinue, nil
}

func (eventTimeTrigger[T]) OnProcessingTime(TriggerContext, int64, Window) (TriggerResult, error) {
	return TriggerContinue, nil
}

func (eventTimeTrigger[T]) Clear(ctx TriggerContext, w Window) error {
	ctx.DeleteEventTimer(w.MaxTimestamp())
	return nil
}

func (eventTimeTrigger[T]) String() string { return "EventTimeTrigger" }

// ProcessingTimeTrigger fires a window when the operator's clock passes
// its end. It is the default trigger of processing-time windows.
func ProcessingTimeTrigger[T any]() Trigger[T] { return processingTimeTrigger[T]{} }

type processingTimeTrigger[T any] struct{}

func (processingTimeTrigger[T]) OnElement(ctx TriggerContext, _ T, _ int64, w Window) (TriggerResult, error) {
	ctx.RegisterProcessingTimer(w.MaxTimestamp())
	return TriggerContinue, nil
}

func (processingTimeTrigger[T]) OnEventTime(TriggerContext, int64, Window) (TriggerResult, error) {
	return TriggerContinue, nil
}

func (processingTimeTrigger[T]) OnProcessingTime(TriggerContext, int64, Window) (TriggerResult, error) {
	return TriggerFire, nil
}

func (processingTimeTrigger[T]) Clear(ctx TriggerContext, w Window) error {
	ctx.DeleteProcessingTimer(w.MaxTimestamp())
	return nil
}

func (processingTimeTrigger[T]) String() string { return "ProcessingTimeTrigger" }

// CountTrigger fires a window each time n more records were added to it
// (the count is trigger state, and restarts after each firing). It does
// not purge: wrap it in PurgingTrigger for windows that start afresh.
// n must be at least 1.
func CountTrigger[T any](n int64) Trigger[T] {
	return &countTrigger[T]{n: n, count: NewTriggerReducing("count", func(a, b int64) int64 { return a + b })}
}

type countTrigger[T any] struct {
	n     int64
	count *TriggerReducing[int64]
}

func (c *countTrigger[T]) OnElement(ctx TriggerContext, _ T, _ int64, _ Window) (TriggerResult, error) {
	c.count.Add(ctx, 1)
	if n, _ := c.count.Value(ctx); n >= c.n {
		c.count.Clear(ctx)
		return TriggerFire, nil
	}
	return TriggerContinue, nil
}

func (c *countTrigger[T]) OnEventTime(TriggerContext, int64, Window) (TriggerResult, error) {
	return TriggerContinue, nil
}

func (c *countTrigger[T]) OnProcessingTime(TriggerContext, int64, Window) (TriggerResult, error) {
	return TriggerContinue, nil
}

func (c *countTrigger[T]) Clear(ctx TriggerContext, _ Window) error {
	c.count.Clear(ctx)
	return nil
}

func (c *countTrigger[T]) String() string { return fmt.Sprintf("CountTrigger(%d)", c.n) }

func (c *countTrigger[T]) validate() error {
	if c.n < 1 {
		return fmt.Errorf("CountTrigger needs a count of at least 1, got %d", c.n)
	}
	return nil
}

// ContinuousEventTimeTrigger fires a window every interval of event time
// (when the watermark passes the next multiple of interval after the
// window's first record) and when the watermark passes the window's end:
// early results of a long window. interval must be at least 1ms.
func ContinuousEventTimeTrigger[T any](interval time.Duration) Trigger[T] {
	return &continuousTrigger[T]{interval: interval.Milliseconds(), fireAt: NewTriggerReducing("fire-time", minInt64)}
}

// ContinuousProcessingTimeTrigger fires a window every interval of the
// operator's clock (at multiples of interval, starting after its first
// record) and, for a window with an end, when the clock passes it.
// interval must be at least 1ms.
func ContinuousProcessingTimeTrigger[T any](interval time.Duration) Trigger[T] {
	return &continuousTrigger[T]{interval: interval.Milliseconds(), processing: true, fireAt: NewTriggerReducing("fire-time", minInt64)}
}

func minInt64(a, b int64) int64 { return min(a, b) }

// continuousTrigger is both continuous triggers: the next early firing's
// time is its trigger state, with a timer at it.
type continuousTrigger[T any] struct {
	interval   int64
	processing bool
	fireAt     *TriggerReducing[int64]
}

func (c *continuousTrigger[T]) OnElement(ctx TriggerContext, _ T, ts int64, w Window) (TriggerResult, error) {
	if c.processing {
		if _, ok := c.fireAt.Value(ctx); !ok {
			now := ctx.CurrentProcessingTime()
			c.next(ctx, now-mod(now, c.interval), w)
		}
		return TriggerContinue, nil
	}
	if w.MaxTimestamp() <= ctx.CurrentWatermark() {
		return TriggerFire, nil // late, within the allowed lateness
	}
	if w.End != math.MaxInt64 {
		ctx.RegisterEventTimer(w.MaxTimestamp())
	}
	if _, ok := c.fireAt.Value(ctx); !ok {
		c.next(ctx, ts-mod(ts, c.interval), w)
	}
	return TriggerContinue, nil
}

// next sets the next firing an interval after t, at the latest at the
// window's end.
func (c *continuousTrigger[T]) next(ctx TriggerContext, t int64, w Window) {
	at := min(t+c.interval, w.MaxTimestamp())
	c.fireAt.Add(ctx, at)
	if c.processing {
		ctx.RegisterProcessingTimer(at)
	} else {
		ctx.RegisterEventTimer(at)
	}
}

func (c *continuousTrigger[T]) onTimer(ctx TriggerContext, t int64, w Window) TriggerResult {
	if at, ok := c.fireAt.Value(ctx); ok && at == t {
		c.fireAt.Clear(ctx)
		c.next(ctx, t, w)
		return TriggerFire
	}
	return TriggerContinue
}

func (c *continuousTrigger[T]) OnEventTime(ctx TriggerContext, t int64, w Window) (TriggerResult, error) {
	if c.processing {
		return TriggerContinue, nil
	}
	if t == w.MaxTimestamp() {
		return TriggerFire, nil
	}
	return c.onTimer(ctx, t, w), nil
}

func (c *continuousTrigger[T]) OnProcessingTime(ctx TriggerContext, t int64, w Window) (TriggerResult, error) {
	if !c.processing {
		return TriggerContinue, nil
	}
	return c.onTimer(ctx, t, w), nil
}

func (c *continuousTrigger[T]) Clear(ctx TriggerContext, w Window) error {
	if at, ok := c.fireAt.Value(ctx); ok {
		if c.processing {
			ctx.DeleteProcessingTimer(at)
		} else {
			ctx.DeleteEventTimer(at)
		}
	}
	c.fireAt.Clear(ctx)
	if !c.processing && w.End != math.MaxInt64 {
		ctx.DeleteEventTimer(w.MaxTimestamp())
	}
	return nil
}

func (c *continuousTrigger[T]) String() string {
	kind := "Event"
	if c.processing {
		kind = "Processing"
	}
	return fmt.Sprintf("Continuous%sTimeTrigger(%v)", kind, time.Duration(c.interval)*time.Millisecond)
}

func (c *continuousTrigger[T]) validate() error {
	if c.interval < 1 {
		return fmt.Errorf("%s needs an interval of at least 1ms", c)
	}
	return nil
}

// mod is a modulo that is never negative, for times before the epoch.
func mod(t, m int64) int64 {
	r := t % m
	if r < 0 {
		r += m
	}
	return r
}

// PurgingTrigger makes every firing of t purge the window too: FIRE
// becomes FIRE_AND_PURGE.
func PurgingTrigger[T any](t Trigger[T]) Trigger[T] { return purgingTrigger[T]{t} }

type purgingTrigger[T any] struct{ t Trigger[T] }

func purging(r TriggerResult, err error) (TriggerResult, error) {
	if r == TriggerFire {
		r = TriggerFireAndPurge
	}
	return r, err
}

func (p purgingTrigger[T]) OnElement(ctx TriggerContext, v T, ts int64, w Window) (TriggerResult, error) {
	return purging(p.t.OnElement(ctx, v, ts, w))
}

func (p purgingTrigger[T]) OnEventTime(ctx TriggerContext, t int64, w Window) (TriggerResult, error) {
	return purging(p.t.OnEventTime(ctx, t, w))
}

func (p purgingTrigger[T]) OnProcessingTime(ctx TriggerContext, t int64, w Window) (TriggerResult, error) {
	return purging(p.t.OnProcessingTime(ctx, t, w))
}

func (p purgingTrigger[T]) Clear(ctx TriggerContext, w Window) error { return p.t.Clear(ctx, w) }

func (p purgingTrigger[T]) String() string { return fmt.Sprintf("PurgingTrigger(%v)", p.t) }

func (p purgingTrigger[T]) validate() error {
	if v, ok := p.t.(interface{ validate() error }); ok {
		return v.validate()
	}
	return nil
}
