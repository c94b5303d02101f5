package window

import (
	"fmt"
	"math"
)

// This file is the contract between the window operator with triggers
// (triggered.go) and the triggers and evictors the public API gives it,
// as Flink's Trigger and Evictor.

// Result is what a trigger decides for a window: whether it fires (emits
// the window's result) and whether it purges (drops the window's
// contents; trigger state and the window itself stay until cleared).
type Result uint8

const (
	Continue     Result = 0
	Fire         Result = 1
	Purge        Result = 2
	FireAndPurge Result = Fire | Purge
)

// Fires reports whether r fires the window.
func (r Result) Fires() bool { return r&Fire != 0 }

// Purges reports whether r purges the window's contents.
func (r Result) Purges() bool { return r&Purge != 0 }

func (r Result) String() string {
	switch r {
	case Continue:
		return "CONTINUE"
	case Fire:
		return "FIRE"
	case Purge:
		return "PURGE"
	case FireAndPurge:
		return "FIRE_AND_PURGE"
	}
	return fmt.Sprintf("Result(%d)", uint8(r))
}

// Domain is the time a window assigner works on.
type Domain uint8

const (
	// EventTime windows are assigned by the record's event time; their
	// state goes when the watermark passes their end plus the allowed
	// lateness, and records for windows already gone are late.
	EventTime Domain = iota
	// ProcessingTime windows are assigned by the operator's clock when
	// the record arrives; their state goes when the clock passes their
	// end. No record is late.
	ProcessingTime
	// Global is the one window of all of a key's records (count
	// windows); its state goes only when a trigger purges it.
	Global
)

// GlobalWindow is the one window of the Global domain.
var GlobalWindow = Window{Start: math.MinInt64, End: math.MaxInt64}

// TriggerContext is what a trigger reaches of the operator while it
// handles one window of one key: the times, timers for that key and
// window, and state for that key and window. Timers of the same time,
// key and window are one timer. State is stored as bytes by name; the
// public API encodes typed values in it.
type TriggerContext interface {
	// CurrentWatermark returns the operator's watermark.
	CurrentWatermark() int64
	// CurrentProcessingTime returns the operator's clock in epoch
	// milliseconds.
	CurrentProcessingTime() int64
	RegisterEventTimer(t int64)
	DeleteEventTimer(t int64)
	RegisterProcessingTimer(t int64)
	DeleteProcessingTimer(t int64)
	// State returns the window's state name, SetState sets it,
	// ClearState removes it.
	State(name string) ([]byte, bool)
	SetState(name string, v []byte)
	ClearState(name string)
}

// Trigger decides when a window fires and purges. The operator calls it
// for each record added to a window (OnElement, with the record's event
// time, dataflow.MinWatermark when it has none), and for each timer it
// registered (OnEventTime, OnProcessingTime). Clear is called when the
// window's state goes: it must delete the trigger's timers and state. An
// error fails the job.
type Trigger[T any] interface {
	OnElement(ctx TriggerContext, v T, ts int64, w Window) (Result, error)
	OnEventTime(ctx TriggerContext, t int64, w Window) (Result, error)
	OnProcessingTime(ctx TriggerContext, t int64, w Window) (Result, error)
	Clear(ctx TriggerContext, w Window) error
}

// Stamped is a record kept in a window with its event time, for
// evictors.
type Stamped[T any] struct {
	Timestamp int64
	Value     T
}

// Evictor removes records from a window when it fires: EvictBefore
// before the window function sees them, EvictAfter after. Each returns
// the records to keep, in order; it may reuse the slice it was given.
type Evictor[T any] interface {
	EvictBefore(ctx TriggerContext, elems []Stamped[T], w Window) []Stamped[T]
	EvictAfter(ctx TriggerContext, elems []Stamped[T], w Window) []Stamped[T]
}
