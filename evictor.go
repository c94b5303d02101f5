package weir

import (
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/operator/window"
)

// TimestampedValue is a record kept in a window, with its event time
// (MinWatermark when it has none).
type TimestampedValue[T any] = window.Stamped[T]

// Evictor removes records from a window when it fires, as Flink's
// Evictor: EvictBefore before the window function sees them, EvictAfter
// after. Each returns the records to keep, in their order; it may reuse
// the slice it was given. A window with an evictor keeps all its records
// until they are evicted or the window purges, whatever the window
// function (AggregateWindow folds the kept records when the window
// fires). A firing that keeps no record emits nothing.
//
// One Evictor value serves all subtasks of the operator, from their own
// goroutines: it must keep nothing in its fields.
type Evictor[T any] interface {
	EvictBefore(ctx EvictorContext, elems []TimestampedValue[T], w Window) []TimestampedValue[T]
	EvictAfter(ctx EvictorContext, elems []TimestampedValue[T], w Window) []TimestampedValue[T]
}

// EvictorContext is what an evictor sees of the operator: its times.
type EvictorContext struct{ c window.TriggerContext }

// CurrentWatermark returns the operator's watermark.
func (c EvictorContext) CurrentWatermark() int64 { return c.c.CurrentWatermark() }

// CurrentProcessingTime returns the operator's clock, in epoch
// milliseconds.
func (c EvictorContext) CurrentProcessingTime() int64 { return c.c.CurrentProcessingTime() }

// CountEvictor keeps the last n records of a window before it fires:
// with CountTrigger over GlobalWindows it makes sliding count windows.
// n must be at least 1.
func CountEvictor[T any](n int64) Evictor[T] { return countEvictor[T]{n} }

type countEvictor[T any] struct{ n int64 }

func (e countEvictor[T]) EvictBefore(_ EvictorContext, elems []TimestampedValue[T], _ Window) []TimestampedValue[T] {
	if int64(len(elems)) <= e.n {
		return elems
	}
	return elems[int64(len(elems))-e.n:]
}

func (e countEvictor[T]) EvictAfter(_ EvictorContext, elems []TimestampedValue[T], _ Window) []TimestampedValue[T] {
	return elems
}

func (e countEvictor[T]) String() string { return fmt.Sprintf("CountEvictor(%d)", e.n) }

func (e countEvictor[T]) validate() error {
	if e.n < 1 {
		return fmt.Errorf("CountEvictor needs a count of at least 1, got %d", e.n)
	}
	return nil
}

// TimeEvictor keeps, before a window fires, the records whose event time
// is within keep of the window's latest record: those with an event time
// above latest-keep. Records without event time are all kept. keep must
// be at least 1ms.
func TimeEvictor[T any](keep time.Duration) Evictor[T] { return timeEvictor[T]{keep.Milliseconds()} }

type timeEvictor[T any] struct{ keep int64 }

func (e timeEvictor[T]) EvictBefore(_ EvictorContext, elems []TimestampedValue[T], _ Window) []TimestampedValue[T] {
	latest := int64(MinWatermark)
	for _, r := range elems {
		latest = max(latest, r.Timestamp)
	}
	if latest == MinWatermark {
		return elems
	}
	cutoff := latest - e.keep
	kept := elems[:0]
	for _, r := range elems {
		if r.Timestamp > cutoff {
			kept = append(kept, r)
		}
	}
	return kept
}

func (e timeEvictor[T]) EvictAfter(_ EvictorContext, elems []TimestampedValue[T], _ Window) []TimestampedValue[T] {
	return elems
}

func (e timeEvictor[T]) String() string {
	return fmt.Sprintf("TimeEvictor(%v)", time.Duration(e.keep)*time.Millisecond)
}

func (e timeEvictor[T]) validate() error {
	if e.keep < 1 {
		return fmt.Errorf("TimeEvictor needs a time of at least 1ms, got %v", time.Duration(e.keep)*time.Millisecond)
	}
	return nil
}

// evictorAdapter shows an Evictor to the window operator.
type evictorAdapter[T any] struct{ e Evictor[T] }

func (a evictorAdapter[T]) EvictBefore(c window.TriggerContext, elems []TimestampedValue[T], w window.Window) []TimestampedValue[T] {
	return a.e.EvictBefore(EvictorContext{c}, elems, Window(w))
}

func (a evictorAdapter[T]) EvictAfter(c window.TriggerContext, elems []TimestampedValue[T], w window.Window) []TimestampedValue[T] {
	return a.e.EvictAfter(EvictorContext{c}, elems, Window(w))
}
