package weir_test

import (
	"context"
	"fmt"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
)

// everyNOrEnd is a custom trigger: it fires and purges a window every n
// records, and at the window's end with what is left. The count is
// trigger state, kept per key and window and checkpointed with it.
type everyNOrEnd[T any] struct {
	n     int64
	count *weir.TriggerValue[int64]
}

func newEveryNOrEnd[T any](n int64) *everyNOrEnd[T] {
	return &everyNOrEnd[T]{n: n, count: weir.NewTriggerValue[int64]("count")}
}

func (e *everyNOrEnd[T]) OnElement(ctx weir.TriggerContext, _ T, _ int64, w weir.Window) (weir.TriggerResult, error) {
	ctx.RegisterEventTimer(w.MaxTimestamp())
	c, _ := e.count.Value(ctx)
	if c+1 == e.n {
		e.count.Clear(ctx)
		return weir.TriggerFireAndPurge, nil
	}
	e.count.Update(ctx, c+1)
	return weir.TriggerContinue, nil
}

func (e *everyNOrEnd[T]) OnEventTime(_ weir.TriggerContext, t int64, w weir.Window) (weir.TriggerResult, error) {
	if t == w.MaxTimestamp() {
		return weir.TriggerFireAndPurge, nil
	}
	return weir.TriggerContinue, nil
}

func (e *everyNOrEnd[T]) OnProcessingTime(weir.TriggerContext, int64, weir.Window) (weir.TriggerResult, error) {
	return weir.TriggerContinue, nil
}

func (e *everyNOrEnd[T]) Clear(ctx weir.TriggerContext, w weir.Window) error {
	ctx.DeleteEventTimer(w.MaxTimestamp())
	e.count.Clear(ctx)
	return nil
}

// A custom trigger emits a minute's clicks of a user in batches of two,
// and the rest when the minute ends.
func ExampleWindowedStream_Trigger() {
	p := weir.NewPipeline()
	clicks := weir.FromSource(p, "clicks", collection.Of(
		userClick{"ann", 1_000}, userClick{"ann", 2_000}, userClick{"ann", 3_000}, userClick{"ann", 61_000}),
		weir.WithTimestamps(func(c userClick) int64 { return c.At }, 0))
	w := weir.WindowBy(weir.KeyBy(clicks, func(c userClick) string { return c.User }), weir.Tumbling(time.Minute)).
		Trigger(newEveryNOrEnd[userClick](2))
	batches := weir.ProcessWindow(w, func(user string, win weir.Window, cs []userClick, emit func(string)) error {
		emit(fmt.Sprintf("%s [%ds, %ds): %d clicks", user, win.Start/1000, win.End/1000, len(cs)))
		return nil
	})
	out := collection.NewSink[string]()
	weir.To(batches, "out", out)
	if err := p.Run(context.Background()); err != nil {
		panic(err)
	}
	for _, r := range out.Records() {
		fmt.Println(r)
	}
	// Output:
	// ann [0s, 60s): 2 clicks
	// ann [0s, 60s): 1 clicks
	// ann [60s, 120s): 1 clicks
}

// Count windows: the sum of every three orders of a customer, and of
// the last three orders every second order.
func ExampleCountWindow() {
	p := weir.NewPipeline()
	orders := weir.FromSource(p, "orders", collection.Of(1, 2, 3, 4, 5, 6), weir.SourceParallelism(1))
	ks := weir.KeyBy(orders, func(int) string { return "ann" })
	sum := func(a, b int) int { return a + b }
	tumbling := weir.ReduceWindow(weir.CountWindow(ks, 3), sum)
	sliding := weir.ReduceWindow(weir.CountWindow(ks, 3, 2), sum)
	t, s := collection.NewSink[weir.Windowed[string, int]](), collection.NewSink[weir.Windowed[string, int]]()
	weir.To(tumbling, "tumbling", t)
	weir.To(sliding, "sliding", s)
	if err := p.Run(context.Background()); err != nil {
		panic(err)
	}
	for _, r := range t.Records() {
		fmt.Println("tumbling", r.Key, r.Value)
	}
	for _, r := range s.Records() {
		fmt.Println("sliding", r.Key, r.Value)
	}
	// Output:
	// tumbling ann 6
	// tumbling ann 15
	// sliding ann 3
	// sliding ann 9
	// sliding ann 15
}

// Early results: a window of an hour fires every ten minutes of event
// time with what it holds so far, and once more at its end.
func ExampleContinuousEventTimeTrigger() {
	p := weir.NewPipeline()
	clicks := weir.FromSource(p, "clicks", collection.Of(
		userClick{"ann", 0}, userClick{"ann", 15 * 60_000}, userClick{"ann", 25 * 60_000}, userClick{"ann", 70 * 60_000}),
		weir.WithTimestamps(func(c userClick) int64 { return c.At }, 0))
	w := weir.WindowBy(weir.KeyBy(clicks, func(c userClick) string { return c.User }), weir.Tumbling(time.Hour)).
		Trigger(weir.ContinuousEventTimeTrigger[userClick](10 * time.Minute))
	counts := weir.ProcessWindow(w, func(user string, win weir.Window, cs []userClick, emit func(string)) error {
		emit(fmt.Sprintf("%s hour %d: %d clicks", user, win.Start/3_600_000, len(cs)))
		return nil
	})
	out := collection.NewSink[string]()
	weir.To(counts, "out", out)
	if err := p.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(len(out.Records()) > 2, out.Records()[len(out.Records())-1])
	// Output: true ann hour 1: 1 clicks
}
