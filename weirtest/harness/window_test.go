package harness_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/weirtest/harness"
)

func TestWindowsFireAtTheWatermarkAndLateRecordsGoToTheSideOutput(t *testing.T) {
	late := weir.NewOutputTag[event]("late")
	h, err := harness.NewAggregateWindow(byKey, weir.Tumbling(10*time.Millisecond), weir.Count[event](),
		harness.AllowedLateness(5*time.Millisecond), harness.LateTo(late))
	must(t, err)
	defer h.Close()
	must(t, h.ProcessElement(event{"a", 1}, 1))
	must(t, h.ProcessElement(event{"a", 2}, 9))
	must(t, h.ProcessElement(event{"b", 3}, 12))
	must(t, h.ProcessWatermark(8))
	if got := h.Output(); len(got) != 0 {
		t.Fatalf("output before the window's end = %v", got)
	}
	must(t, h.ProcessWatermark(9))
	want := []harness.Record[weir.Windowed[string, int64]]{
		{Value: weir.Windowed[string, int64]{Key: "a", Window: weir.Window{Start: 0, End: 10}, Value: 2}, Timestamp: 9}}
	if got := h.TakeOutput(); !slices.Equal(got, want) {
		t.Fatalf("output at watermark 9 = %v, want %v", got, want)
	}
	// Within the allowed lateness: the window fires again, updated.
	must(t, h.ProcessElement(event{"a", 4}, 5))
	want[0].Value.Value = 3
	if got := h.TakeOutput(); !slices.Equal(got, want) {
		t.Fatalf("output after a record within the lateness = %v, want %v", got, want)
	}
	// Past it: the record is late.
	must(t, h.ProcessWatermark(14))
	must(t, h.ProcessElement(event{"a", 5}, 3))
	wantLate := []harness.Record[event]{{Value: event{"a", 5}, Timestamp: 3}}
	if got := harness.SideOutput(h, late); !slices.Equal(got, wantLate) {
		t.Fatalf("late side output = %v, want %v", got, wantLate)
	}
	if got := h.LateDropped(); got != 0 {
		t.Fatalf("late records dropped with a late side output = %d", got)
	}
	if got := h.TakeOutput(); len(got) != 0 {
		t.Fatalf("a late record changed the output: %v", got)
	}
}

func TestLateRecordsWithoutASideOutputAreCounted(t *testing.T) {
	h, err := harness.NewReduceWindow(byKey, weir.Tumbling(10*time.Millisecond), func(a, b event) event {
		return event{a.Key, a.N + b.N}
	})
	must(t, err)
	defer h.Close()
	must(t, h.ProcessWatermark(20))
	must(t, h.ProcessElement(event{"a", 1}, 3))
	if got := h.LateDropped(); got != 1 {
		t.Fatalf("late records dropped = %d, want 1", got)
	}
}

func TestAnErrorOfAWindowFunctionFailsTheHarness(t *testing.T) {
	errTooMany := errors.New("too many")
	h, err := harness.NewProcessWindow(byKey, weir.Session(5*time.Millisecond),
		func(k string, w weir.Window, recs []event, emit func(string)) error {
			if len(recs) > 2 {
				return errTooMany
			}
			emit(fmt.Sprintf("%s[%d,%d):%d", k, w.Start, w.End, len(recs)))
			return nil
		})
	must(t, err)
	defer h.Close()
	for _, ts := range []int64{1, 3, 20, 22, 24} {
		must(t, h.ProcessElement(event{"a", ts}, ts))
	}
	must(t, h.ProcessWatermark(10))
	if got := harness.Values(h.Output()); !slices.Equal(got, []string{"a[1,8):2"}) {
		t.Fatalf("output of the first session = %v", got)
	}
	if err := h.EndInput(); !errors.Is(err, errTooMany) {
		t.Fatalf("firing the second session = %v, want the function's error", err)
	}
}

func TestWindowOptionsAreCheckedAgainstTheWindow(t *testing.T) {
	_, err := harness.NewAggregateWindow(byKey, weir.Tumbling(time.Second), weir.Count[event](),
		harness.LateTo(weir.NewOutputTag[string]("late")))
	if err == nil || !strings.Contains(err.Error(), "LateTo") {
		t.Fatalf("LateTo with a tag of another type: %v, want an error naming LateTo", err)
	}
	_, err = harness.NewAggregateWindow(byKey, weir.Sliding(time.Second, 2*time.Second), weir.Count[event]())
	if err == nil || !strings.Contains(err.Error(), "slide") {
		t.Fatalf("a sliding window with a slide above its size: %v, want the assigner's error", err)
	}
}

// joinFn pairs orders (first input) with payments (second input) of the
// same key, keeping the unmatched side in state until an event-time timer
// at the record's time plus 10ms drops it.
type joinFn struct {
	order *weir.ValueState[int64, string]
	paid  *weir.ValueState[int64, string]
}

func (j *joinFn) Open(sc *weir.StateContext[string]) error {
	j.order = weir.NewValueState[int64](sc, "order")
	j.paid = weir.NewValueState[int64](sc, "paid")
	return nil
}

func (j *joinFn) ProcessElement1(ctx *weir.KeyedContext[string, string], e event) error {
	if p, ok := j.paid.Value(); ok {
		ctx.Emit(fmt.Sprintf("%s:%d/%d", ctx.Key(), e.N, p))
		j.paid.Clear()
		return nil
	}
	j.order.Update(e.N)
	ctx.RegisterEventTimer(ctx.Timestamp() + 10)
	return nil
}

func (j *joinFn) ProcessElement2(ctx *weir.KeyedContext[string, string], e event) error {
	if o, ok := j.order.Value(); ok {
		ctx.Emit(fmt.Sprintf("%s:%d/%d", ctx.Key(), o, e.N))
		j.order.Clear()
		return nil
	}
	j.paid.Update(e.N)
	ctx.RegisterEventTimer(ctx.Timestamp() + 10)
	return nil
}

func (j *joinFn) OnTimer(ctx *weir.KeyedContext[string, string], t int64, _ weir.TimeDomain) error {
	if o, ok := j.order.Value(); ok {
		ctx.Emit(fmt.Sprintf("%s:%d/unpaid", ctx.Key(), o))
	}
	j.order.Clear()
	j.paid.Clear()
	return nil
}

func TestCoProcessSharesStateAndFollowsTheLowerWatermark(t *testing.T) {
	h, err := harness.NewCoProcess(byKey, byKey, func() weir.CoProcessFunction[string, event, event, string] { return &joinFn{} })
	must(t, err)
	defer h.Close()
	must(t, h.ProcessElement1(event{"a", 7}, 1))
	must(t, h.ProcessElement2(event{"a", 70}, 2))
	must(t, h.ProcessElement1(event{"b", 8}, 3)) // timer b@13
	if got := harness.Values(h.TakeOutput()); !slices.Equal(got, []string{"a:7/70"}) {
		t.Fatalf("output of a matched pair = %v", got)
	}
	if o, ok, _ := harness.Value[int64](h, "b", "order"); !ok || o != 8 {
		t.Fatalf("b's order in state = %d, %v; want 8", o, ok)
	}
	must(t, h.ProcessWatermark1(100))
	if h.Watermark() > 0 || len(h.Output()) != 0 {
		t.Fatalf("output with only the first input's watermark at 100 = %v", h.Output())
	}
	must(t, h.ProcessWatermark2(13))
	if h.Watermark() != 13 {
		t.Fatalf("operator watermark = %d, want the lower input's, 13", h.Watermark())
	}
	if got := harness.Values(h.TakeOutput()); !slices.Equal(got, []string{"b:8/unpaid"}) {
		t.Fatalf("output at watermark 13 = %v", got)
	}
	if _, ok, _ := harness.Value[int64](h, "b", "order"); ok {
		t.Fatal("b's order is still in state after its timer")
	}
}

// runningCount emits each key's count at every record, and the time of
// each event-time timer it registers 10ms after a record when it fires:
// output that does not depend on how records of different subtasks
// interleave, nor on when watermarks arrive.
type runningCount struct {
	count *weir.ValueState[int64, string]
}

func (c *runningCount) Open(sc *weir.StateContext[string]) error {
	c.count = weir.NewValueState[int64](sc, "count")
	return nil
}

func (c *runningCount) ProcessElement(ctx *weir.KeyedContext[string, string], e event) error {
	n, _ := c.count.Value()
	c.count.Update(n + 1)
	ctx.Emit(fmt.Sprintf("%s#%d", ctx.Key(), n+1))
	ctx.RegisterEventTimer(ctx.Timestamp() + 10)
	return nil
}

func (c *runningCount) OnTimer(ctx *weir.KeyedContext[string, string], t int64, _ weir.TimeDomain) error {
	ctx.Emit(fmt.Sprintf("%s@%d", ctx.Key(), t))
	return nil
}

// TestTheHarnessEmitsWhatAPipelineEmits runs the same functions in a
// pipeline and in harnesses over the same records and compares the
// results: a window's and a keyed process function's, whose output does
// not depend on when watermarks arrive.
func TestTheHarnessEmitsWhatAPipelineEmits(t *testing.T) {
	var in []event
	for i := range int64(200) {
		in = append(in, event{fmt.Sprint("k", i%7), i})
	}
	ts := func(e event) int64 { return e.N * 3 }
	newCount := func() weir.KeyedProcessFunction[string, event, string] { return &runningCount{} }

	p := weir.NewPipeline(weir.WithParallelism(2))
	src := weir.FromSource(p, "events", collection.Of(in...), weir.WithTimestamps(ts, 0))
	windows := collection.NewSink[weir.Windowed[string, int64]]()
	weir.To(weir.AggregateWindow(weir.WindowBy(weir.KeyBy(src, byKey), weir.Sliding(40*time.Millisecond, 20*time.Millisecond)),
		weir.Count[event]()), "windows", windows)
	counts := collection.NewSink[string]()
	weir.To(weir.Process(weir.KeyBy(src, byKey), newCount), "counts", counts)
	must(t, p.Run(context.Background()))

	w, err := harness.NewAggregateWindow(byKey, weir.Sliding(40*time.Millisecond, 20*time.Millisecond), weir.Count[event]())
	must(t, err)
	defer w.Close()
	c, err := harness.NewProcess(byKey, newCount)
	must(t, err)
	defer c.Close()
	for _, e := range in {
		must(t, w.ProcessElement(e, ts(e)))
		must(t, c.ProcessElement(e, ts(e)))
	}
	must(t, w.EndInput())
	must(t, c.EndInput())

	sorted := func(s []string) []string { slices.Sort(s); return s }
	var gotW, wantW []string
	for _, r := range harness.Values(w.Output()) {
		gotW = append(gotW, fmt.Sprint(r))
	}
	for _, r := range windows.Records() {
		wantW = append(wantW, fmt.Sprint(r))
	}
	if len(wantW) == 0 || len(counts.Records()) != 2*200 {
		t.Fatalf("the pipeline emitted %d windows and %d counts, want some and 200 counts with 200 timers", len(wantW), len(counts.Records()))
	}
	if g, w := sorted(gotW), sorted(wantW); !slices.Equal(g, w) {
		t.Fatalf("window results: harness %v, pipeline %v", g, w)
	}
	if g, w := sorted(harness.Values(c.Output())), sorted(counts.Records()); !slices.Equal(g, w) {
		t.Fatalf("process results: harness %v, pipeline %v", g, w)
	}
}
