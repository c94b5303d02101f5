package weirtest_test

import (
	"fmt"
	"math"
	"time"

	"testing"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// The jobs with window triggers. Count windows and the custom trigger
// depend on the order of each key's records, so their source reads
// with one subtask: the order is then the generator's, in every run.

// orderedEvents is events read by one source subtask.
func orderedEvents(p *weir.Pipeline, n int64) weir.Stream[event] {
	src := generator.New(n, func(i int64) event {
		return event{Key: int64(generator.Mix(5, uint64(i)) % 40), Time: i}
	}, generator.WithRate(100_000))
	return weir.FromSource(p, "events", src, weir.WithTimestamps(func(e event) int64 { return e.Time }, 0), weir.SourceParallelism(1))
}

// firingSpan is a window firing: its key, the first and last event
// times it saw, and how many records.
type firingSpan struct{ Key, First, Last, N int64 }

func spans(key int64, _ weir.Window, recs []event, emit func(firingSpan)) error {
	emit(firingSpan{key, recs[0].Time, recs[len(recs)-1].Time, int64(len(recs))})
	return nil
}

func countWindowJob(p *weir.Pipeline, sink connector.Sink[firingSpan]) {
	ks := weir.KeyBy(orderedEvents(p, 20_000), func(e event) int64 { return e.Key })
	tumbling := weir.ProcessWindow(weir.CountWindow(ks, 9), spans, weir.Name("count-tumbling"))
	sliding := weir.ProcessWindow(weir.CountWindow(ks, 10, 4), spans, weir.Name("count-sliding"))
	weir.To(weir.Union(tumbling, sliding), "sink", sink)
}

// everyNOrEnd fires and purges a window every n records, and at its end
// with what is left: a trigger with trigger state and an event-time
// timer.
type everyNOrEnd struct {
	n     int64
	count *weir.TriggerValue[int64]
}

func newEveryNOrEnd(n int64) *everyNOrEnd {
	return &everyNOrEnd{n: n, count: weir.NewTriggerValue[int64]("count")}
}

func (e *everyNOrEnd) OnElement(ctx weir.TriggerContext, _ event, _ int64, w weir.Window) (weir.TriggerResult, error) {
	ctx.RegisterEventTimer(w.MaxTimestamp())
	c, _ := e.count.Value(ctx)
	if c+1 == e.n {
		e.count.Clear(ctx)
		return weir.TriggerFireAndPurge, nil
	}
	e.count.Update(ctx, c+1)
	return weir.TriggerContinue, nil
}

func (e *everyNOrEnd) OnEventTime(ctx weir.TriggerContext, t int64, w weir.Window) (weir.TriggerResult, error) {
	if t == w.MaxTimestamp() {
		return weir.TriggerFireAndPurge, nil
	}
	return weir.TriggerContinue, nil
}

func (e *everyNOrEnd) OnProcessingTime(weir.TriggerContext, int64, weir.Window) (weir.TriggerResult, error) {
	return weir.TriggerContinue, nil
}

func (e *everyNOrEnd) Clear(ctx weir.TriggerContext, w weir.Window) error {
	ctx.DeleteEventTimer(w.MaxTimestamp())
	e.count.Clear(ctx)
	return nil
}

func customTriggerJob(p *weir.Pipeline, sink connector.Sink[firingSpan]) {
	w := weir.WindowBy(weir.KeyBy(orderedEvents(p, 20_000), func(e event) int64 { return e.Key }), weir.Tumbling(200*time.Millisecond)).
		Trigger(newEveryNOrEnd(6))
	weir.To(weir.ProcessWindow(w, spans), "sink", sink)
}

func TestOracleCountWindows(t *testing.T) {
	for _, v := range exactlyOnceVariants() {
		t.Run(v.name, func(t *testing.T) {
			res := weirtest.Check(t, countWindowJob, weirtest.Options[firingSpan]{Guarantee: v.g, Checkpoints: v.ck, Seeds: seeds(6)})
			report(t, res)
		})
	}
}

func TestOracleCustomTrigger(t *testing.T) {
	for _, v := range exactlyOnceVariants() {
		t.Run(v.name, func(t *testing.T) {
			res := weirtest.Check(t, customTriggerJob, weirtest.Options[firingSpan]{Guarantee: v.g, Checkpoints: v.ck, Seeds: seeds(6)})
			report(t, res)
		})
	}
}

// windowed is one record as a processing-time window saw it.
type windowed struct{ Start, ID int64 }

// processingTimeJob puts every record into a 20ms processing-time window
// and emits each record of a window when it fires. Which window a record
// lands in depends on timing; that each record lands in exactly one,
// under exactly-once, does not.
func processingTimeJob(p *weir.Pipeline, sink connector.Sink[windowed]) {
	src := generator.New(20_000, func(i int64) event { return event{Key: i % 40, Time: i} }, generator.WithRate(100_000))
	in := weir.FromSource(p, "events", src) // no event time
	w := weir.WindowBy(weir.KeyBy(in, func(e event) int64 { return e.Key }), weir.TumblingProcessingTime(20*time.Millisecond))
	weir.To(weir.ProcessWindow(w, eachRecord), "sink", sink)
}

// eachRecord emits each record of a firing window with the window.
func eachRecord(_ int64, win weir.Window, recs []event, emit func(windowed)) error {
	for _, r := range recs {
		emit(windowed{win.Start, r.Time})
	}
	return nil
}

// processingTimeSessionJob sessionizes each key's records by the clock
// at which they arrive, with a 3ms gap: at the generator's rate a key's
// records arrive about 3ms apart, so sessions both merge and fire while
// records arrive, and checkpoints take open sessions with their timers.
func processingTimeSessionJob(p *weir.Pipeline, sink connector.Sink[windowed]) {
	src := generator.New(20_000, func(i int64) event { return event{Key: i % 300, Time: i} }, generator.WithRate(100_000))
	in := weir.FromSource(p, "events", src) // no event time
	w := weir.WindowBy(weir.KeyBy(in, func(e event) int64 { return e.Key }), weir.SessionProcessingTime(3*time.Millisecond))
	weir.To(weir.ProcessWindow(w, eachRecord), "sink", sink)
}

// compareIDs compares the records' ids, whatever their windows: once
// each under exactly-once, at least once under at-least-once, at most
// once under at-most-once.
func compareIDs(g weir.Guarantee) func([]windowed, []weirtest.Written[windowed], *weir.Report) error {
	return func(ref []windowed, got []weirtest.Written[windowed], _ *weir.Report) error {
		want := map[int64]bool{}
		for _, r := range ref {
			want[r.ID] = true
		}
		seen := map[int64]int{}
		for _, w := range got {
			if !want[w.Value.ID] {
				return fmt.Errorf("record %d is not in the failure-free output", w.Value.ID)
			}
			seen[w.Value.ID]++
		}
		lo, hi := 1, 1
		switch g {
		case weir.AtLeastOnce:
			hi = math.MaxInt
		case weir.AtMostOnce:
			lo = 0
		}
		for id := range want {
			if n := seen[id]; n < lo || n > hi {
				return fmt.Errorf("record %d counted in %d windows under %s", id, n, g)
			}
		}
		return nil
	}
}

func TestOracleProcessingTimeWindowsCountEveryRecordOnce(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			res := weirtest.Check(t, processingTimeJob, weirtest.Options[windowed]{Guarantee: v.g, Checkpoints: v.ck,
				Seeds: seeds(6), Compare: compareIDs(v.g)})
			report(t, res)
		})
	}
}

func TestOracleProcessingTimeSessionsCountEveryRecordOnce(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			res := weirtest.Check(t, processingTimeSessionJob, weirtest.Options[windowed]{Guarantee: v.g, Checkpoints: v.ck,
				Seeds: seeds(6), Compare: compareIDs(v.g)})
			report(t, res)
		})
	}
}
