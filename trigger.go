package weir

import (
	"fmt"
	"reflect"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/operator/window"
	"github.com/weir-stream/weir/internal/task"
)

// This file is window triggers, as Flink's: what decides when a window
// fires (emits its result) and purges (drops its contents), with the
// state and timers a trigger keeps per key and window. The built-in
// triggers are in trigger_builtin.go.

// TriggerResult is what a trigger decides for a window.
type TriggerResult uint8

const (
	// TriggerContinue does nothing.
	TriggerContinue = TriggerResult(window.Continue)
	// TriggerFire emits the window's result and keeps its contents.
	TriggerFire = TriggerResult(window.Fire)
	// TriggerPurge drops the window's contents without emitting them.
	TriggerPurge = TriggerResult(window.Purge)
	// TriggerFireAndPurge emits the window's result, then drops its
	// contents.
	TriggerFireAndPurge = TriggerResult(window.FireAndPurge)
)

func (r TriggerResult) String() string { return window.Result(r).String() }

// Trigger decides when a window of a key fires and purges, as Flink's
// Trigger. The window operator calls OnElement after it added a record
// to a window (ts is the record's event time, or MinWatermark when it has
// none), OnEventTime when the watermark passes an event-time timer the
// trigger registered for the window, OnProcessingTime when the clock
// passes a processing-time timer, and Clear when the window's state
// goes (at its cleanup time: its end plus the allowed lateness for
// event-time windows, its end for processing-time windows, never for
// the global window of count windows). Clear must delete the timers and
// the trigger state the trigger set for the window.
//
// Purging drops the window's contents; the window itself, its trigger
// state and timers stay until cleared, so a later record starts it
// afresh. Timer callbacks see a fired window's contents as they are;
// firing an empty (purged) window emits nothing.
//
// One Trigger value serves all subtasks of the operator, from their own
// goroutines, and a restore starts it anew: keep what it needs across
// calls in trigger state (TriggerValue, TriggerReducing), which is
// checkpointed with the window and moves with its key at a rescale, not
// in the Trigger's fields. An error fails the job.
type Trigger[T any] interface {
	OnElement(ctx TriggerContext, v T, ts int64, w Window) (TriggerResult, error)
	OnEventTime(ctx TriggerContext, t int64, w Window) (TriggerResult, error)
	OnProcessingTime(ctx TriggerContext, t int64, w Window) (TriggerResult, error)
	Clear(ctx TriggerContext, w Window) error
}

// TriggerContext is what a trigger reaches while it handles one window
// of one key: the operator's times, timers for that window and key, and
// (through TriggerValue and TriggerReducing) state for them. It is valid
// only during the call it is passed to. A timer is known by its time,
// key and window: registering it twice registers it once.
type TriggerContext struct{ c window.TriggerContext }

// CurrentWatermark returns the operator's watermark.
func (c TriggerContext) CurrentWatermark() int64 { return c.c.CurrentWatermark() }

// CurrentProcessingTime returns the operator's clock, in epoch
// milliseconds.
func (c TriggerContext) CurrentProcessingTime() int64 { return c.c.CurrentProcessingTime() }

// RegisterEventTimer asks for OnEventTime(t) when the watermark reaches t.
func (c TriggerContext) RegisterEventTimer(t int64) { c.c.RegisterEventTimer(t) }

// DeleteEventTimer deletes the event-time timer at t, if any.
func (c TriggerContext) DeleteEventTimer(t int64) { c.c.DeleteEventTimer(t) }

// RegisterProcessingTimer asks for OnProcessingTime(t) when the clock
// reaches t.
func (c TriggerContext) RegisterProcessingTimer(t int64) { c.c.RegisterProcessingTimer(t) }

// DeleteProcessingTimer deletes the processing-time timer at t, if any.
func (c TriggerContext) DeleteProcessingTimer(t int64) { c.c.DeleteProcessingTimer(t) }

// TriggerValue is a trigger's state: one value of type V per key and
// window, known by its name, checkpointed with the window.
type TriggerValue[V any] struct {
	name string
	c    codec.Codec[V]
	err  error
}

// NewTriggerValue returns the trigger state name. Two states of one
// trigger need two names. V needs a codec (codec.For).
func NewTriggerValue[V any](name string) *TriggerValue[V] {
	c, err := codec.For[V]()
	return &TriggerValue[V]{name: name, c: c, err: err}
}

func (s *TriggerValue[V]) check() {
	if s.err != nil {
		task.Fail(fmt.Errorf("trigger state %q: values of type %v cannot be checkpointed: %w", s.name, reflect.TypeFor[V](), s.err))
	}
}

// Value returns the window's value and whether it is set.
func (s *TriggerValue[V]) Value(ctx TriggerContext) (V, bool) {
	s.check()
	var v V
	b, ok := ctx.c.State(s.name)
	if !ok {
		return v, false
	}
	if _, err := s.c.Decode(b, &v); err != nil {
		task.Fail(fmt.Errorf("trigger state %q: %w", s.name, err))
	}
	return v, true
}

// Update sets the window's value.
func (s *TriggerValue[V]) Update(ctx TriggerContext, v V) {
	s.check()
	ctx.c.SetState(s.name, s.c.Append(nil, v))
}

// Clear removes the window's value.
func (s *TriggerValue[V]) Clear(ctx TriggerContext) { ctx.c.ClearState(s.name) }

// TriggerReducing is a trigger's state that folds the values added to
// it with a reduce function, as Flink's ReducingState.
type TriggerReducing[V any] struct {
	TriggerValue[V]
	reduce func(a, b V) V
}

// NewTriggerReducing returns the reducing trigger state name.
func NewTriggerReducing[V any](name string, reduce func(a, b V) V) *TriggerReducing[V] {
	return &TriggerReducing[V]{TriggerValue: *NewTriggerValue[V](name), reduce: reduce}
}

// Add folds v into the window's value: the value becomes v if it was
// not set, reduce(value, v) otherwise.
func (s *TriggerReducing[V]) Add(ctx TriggerContext, v V) {
	if old, ok := s.Value(ctx); ok {
		v = s.reduce(old, v)
	}
	s.Update(ctx, v)
}

// triggerAdapter shows a Trigger to the window operator.
type triggerAdapter[T any] struct{ t Trigger[T] }

func (a triggerAdapter[T]) OnElement(c window.TriggerContext, v T, ts int64, w window.Window) (window.Result, error) {
	r, err := a.t.OnElement(TriggerContext{c}, v, ts, Window(w))
	return window.Result(r), err
}

func (a triggerAdapter[T]) OnEventTime(c window.TriggerContext, t int64, w window.Window) (window.Result, error) {
	r, err := a.t.OnEventTime(TriggerContext{c}, t, Window(w))
	return window.Result(r), err
}

func (a triggerAdapter[T]) OnProcessingTime(c window.TriggerContext, t int64, w window.Window) (window.Result, error) {
	r, err := a.t.OnProcessingTime(TriggerContext{c}, t, Window(w))
	return window.Result(r), err
}

func (a triggerAdapter[T]) Clear(c window.TriggerContext, w window.Window) error {
	return a.t.Clear(TriggerContext{c}, Window(w))
}
