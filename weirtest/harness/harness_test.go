package harness_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/weirtest/harness"
)

// event is a test record: a key and a number.
type event struct {
	Key string
	N   int64
}

func byKey(e event) string { return e.Key }

// counter counts each key's records in ValueState "count", remembers
// them in ListState "seen" and MapState "last" (by parity: last N), and
// registers an event-time timer 10ms after each record, which emits the
// key's count.
type counter struct {
	count *weir.ValueState[int64, string]
	seen  *weir.ListState[int64, string]
	last  *weir.MapState[string, int64, string]
	fail  int64 // a record with this N fails the function
}

var errBadRecord = errors.New("bad record")

func (c *counter) Open(sc *weir.StateContext[string]) error {
	c.count = weir.NewValueState[int64](sc, "count")
	c.seen = weir.NewListState[int64](sc, "seen")
	c.last = weir.NewMapState[string, int64](sc, "last")
	return nil
}

func (c *counter) ProcessElement(ctx *weir.KeyedContext[string, string], e event) error {
	if c.fail != 0 && e.N == c.fail {
		return fmt.Errorf("record %d: %w", e.N, errBadRecord)
	}
	n, _ := c.count.Value()
	c.count.Update(n + 1)
	c.seen.Add(e.N)
	c.last.Put([]string{"even", "odd"}[e.N%2], e.N)
	ctx.RegisterEventTimer(ctx.Timestamp() + 10)
	return nil
}

func (c *counter) OnTimer(ctx *weir.KeyedContext[string, string], t int64, d weir.TimeDomain) error {
	n, _ := c.count.Value()
	ctx.Emit(fmt.Sprintf("%s@%d:%d", ctx.Key(), t, n))
	return nil
}

func newCounter(t *testing.T, opts ...harness.Option) *harness.Process[string, event, string] {
	t.Helper()
	h, err := harness.NewProcess(byKey, func() weir.KeyedProcessFunction[string, event, string] { return &counter{fail: 13} }, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestEventTimersFireWhenTheWatermarkReachesThemInTimeOrder(t *testing.T) {
	h := newCounter(t)
	must(t, h.ProcessElement(event{"a", 1}, 5)) // timer a@15
	must(t, h.ProcessElement(event{"b", 2}, 1)) // timer b@11
	must(t, h.ProcessElement(event{"c", 3}, 3)) // timer c@13
	if got := h.PendingEventTimers(); got != 3 {
		t.Fatalf("pending event timers = %d, want 3", got)
	}
	must(t, h.ProcessWatermark(10))
	if got := h.Output(); len(got) != 0 {
		t.Fatalf("output before any timer is due = %v, want none", got)
	}
	must(t, h.ProcessWatermark(13))
	want := []harness.Record[string]{{Value: "b@11:1", Timestamp: 11}, {Value: "c@13:1", Timestamp: 13}}
	if got := h.TakeOutput(); !slices.Equal(got, want) {
		t.Fatalf("output at watermark 13 = %v, want %v", got, want)
	}
	must(t, h.EndInput())
	want = []harness.Record[string]{{Value: "a@15:1", Timestamp: 15}}
	if got := h.TakeOutput(); !slices.Equal(got, want) {
		t.Fatalf("output at the end of input = %v, want %v", got, want)
	}
	if got := h.PendingEventTimers(); got != 0 {
		t.Fatalf("pending event timers after the end = %d, want 0", got)
	}
}

func TestStateIsVisibleAndSettableByName(t *testing.T) {
	h := newCounter(t)
	must(t, h.ProcessElement(event{"a", 4}, 1))
	must(t, h.ProcessElement(event{"a", 7}, 2))
	must(t, h.ProcessElement(event{"b", 1}, 2))

	n, ok, err := harness.Value[int64](h, "a", "count")
	if err != nil || !ok || n != 2 {
		t.Fatalf("count of a = %d, %v, %v; want 2, true, nil", n, ok, err)
	}
	seen, err := harness.List[int64](h, "a", "seen")
	if err != nil || !slices.Equal(seen, []int64{4, 7}) {
		t.Fatalf("seen of a = %v, %v; want [4 7]", seen, err)
	}
	last, err := harness.Map[string, int64](h, "a", "last")
	if err != nil || len(last) != 2 || last["even"] != 4 || last["odd"] != 7 {
		t.Fatalf("last of a = %v, %v; want map[even:4 odd:7]", last, err)
	}
	if _, ok, _ := harness.Value[int64](h, "zed", "count"); ok {
		t.Fatal("count of a key never seen is set")
	}

	must(t, harness.SetValue(h, "b", "count", int64(40)))
	must(t, harness.SetList(h, "b", "seen", []int64{9}))
	must(t, harness.SetMap(h, "b", "last", map[string]int64{"odd": 9}))
	must(t, h.ProcessElement(event{"b", 2}, 3))
	must(t, h.ProcessWatermark(20))
	if got := harness.Values(h.Output()); !slices.Contains(got, "b@13:41") {
		t.Fatalf("output after setting b's count to 40 = %v, want b@13:41 in it", got)
	}
	seen, _ = harness.List[int64](h, "b", "seen")
	last, _ = harness.Map[string, int64](h, "b", "last")
	if !slices.Equal(seen, []int64{9, 2}) || last["odd"] != 9 || last["even"] != 2 {
		t.Fatalf("b's seen and last = %v, %v; want [9 2] and map[even:2 odd:9]", seen, last)
	}
	must(t, harness.ClearValue[int64](h, "b", "count"))
	if _, ok, _ := harness.Value[int64](h, "b", "count"); ok {
		t.Fatal("b's count is set after ClearValue")
	}
}

func TestStateAccessNamesWhatIsWrong(t *testing.T) {
	h := newCounter(t)
	_, _, err := harness.Value[int64](h, "a", "cnt")
	if err == nil || !strings.Contains(err.Error(), `no state "cnt"`) || !strings.Contains(err.Error(), `"count"`) {
		t.Fatalf("reading an unknown state: %v, want an error naming it and the function's states", err)
	}
	_, _, err = harness.Value[string](h, "a", "count")
	if err == nil || !strings.Contains(err.Error(), `"count"`) {
		t.Fatalf("reading a state with the wrong type: %v, want an error naming the state", err)
	}
	_, _, err = harness.Value[int64](h, "a", "count", weir.StateTTL(time.Second))
	if err == nil || !strings.Contains(err.Error(), "time-to-live") {
		t.Fatalf("reading a state with a time-to-live it does not have: %v, want an error", err)
	}
}

func TestAnErrorOfTheFunctionFailsTheHarness(t *testing.T) {
	h := newCounter(t)
	must(t, h.ProcessElement(event{"a", 1}, 1))
	err := h.ProcessElement(event{"a", 13}, 2)
	if !errors.Is(err, errBadRecord) || !strings.Contains(err.Error(), "process") {
		t.Fatalf("ProcessElement of a bad record = %v, want the function's error, named by the operator", err)
	}
	err = h.ProcessWatermark(100)
	if !errors.Is(err, harness.ErrFailed) || !errors.Is(err, errBadRecord) {
		t.Fatalf("a watermark after the failure = %v, want ErrFailed wrapping the failure", err)
	}
	if _, err := h.Snapshot(); !errors.Is(err, harness.ErrFailed) {
		t.Fatalf("a snapshot after the failure = %v, want ErrFailed", err)
	}
}

func TestTimeMayNotGoBack(t *testing.T) {
	h := newCounter(t)
	must(t, h.ProcessWatermark(10))
	must(t, h.ProcessWatermark(10))
	if err := h.ProcessWatermark(9); err == nil {
		t.Fatal("a watermark behind the operator's was accepted")
	}
	must(t, h.SetProcessingTime(100))
	if err := h.SetProcessingTime(99); err == nil {
		t.Fatal("a processing time behind the clock was accepted")
	}
	if h.Watermark() != 10 || h.ProcessingTime() != 100 {
		t.Fatalf("watermark and clock = %d, %d after refused moves, want 10, 100", h.Watermark(), h.ProcessingTime())
	}
}

// session keeps a key's records in state with a time-to-live of 100ms of
// processing time and clears them with a processing-time timer 50ms after
// the first one, emitting what it held.
type session struct {
	recs *weir.ListState[int64, string]
	ttl  *weir.ValueState[string, string]
}

func (s *session) Open(sc *weir.StateContext[string]) error {
	s.recs = weir.NewListState[int64](sc, "recs")
	s.ttl = weir.NewValueState[string](sc, "note", weir.StateTTL(100*time.Millisecond))
	return nil
}

func (s *session) ProcessElement(ctx *weir.KeyedContext[string, string], e event) error {
	if len(s.recs.Get()) == 0 {
		ctx.RegisterProcessingTimer(ctx.ProcessingTime() + 50)
	}
	s.recs.Add(e.N)
	s.ttl.Update(fmt.Sprint("noted at ", ctx.ProcessingTime()))
	return nil
}

func (s *session) OnTimer(ctx *weir.KeyedContext[string, string], t int64, d weir.TimeDomain) error {
	if d != weir.ProcessingTime {
		return fmt.Errorf("unexpected %v timer", d)
	}
	ctx.Emit(fmt.Sprintf("%s@%d:%v", ctx.Key(), t, s.recs.Get()))
	s.recs.Clear()
	return nil
}

func newSession(t *testing.T, opts ...harness.Option) *harness.Process[string, event, string] {
	t.Helper()
	h, err := harness.NewProcess(byKey, func() weir.KeyedProcessFunction[string, event, string] { return &session{} }, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func TestProcessingTimersFireWhenTheClockReachesThem(t *testing.T) {
	h := newSession(t)
	must(t, h.SetProcessingTime(1000))
	must(t, h.ProcessElement(event{"a", 1}, weir.NoTimestamp)) // timer a@1050
	must(t, h.SetProcessingTime(1020))
	must(t, h.ProcessElement(event{"b", 2}, weir.NoTimestamp)) // timer b@1070
	must(t, h.ProcessElement(event{"a", 3}, weir.NoTimestamp))
	must(t, h.SetProcessingTime(1049))
	if got := h.Output(); len(got) != 0 {
		t.Fatalf("output before a timer is due = %v", got)
	}
	must(t, h.SetProcessingTime(2000))
	want := []string{"a@1050:[1 3]", "b@1070:[2]"}
	if got := harness.Values(h.TakeOutput()); !slices.Equal(got, want) {
		t.Fatalf("output at 2000 = %v, want %v", got, want)
	}
	if got := h.PendingProcessingTimers(); got != 0 {
		t.Fatalf("pending processing timers = %d, want 0", got)
	}
	if recs, _ := harness.List[int64](h, "a", "recs"); len(recs) != 0 {
		t.Fatalf("a's records after its timer = %v, want none", recs)
	}
}

func TestStateTimeToLiveFollowsTheHarnessClock(t *testing.T) {
	h := newSession(t)
	ttl := weir.StateTTL(100 * time.Millisecond)
	must(t, h.SetProcessingTime(1000))
	must(t, h.ProcessElement(event{"a", 1}, weir.NoTimestamp))
	must(t, h.SetProcessingTime(1099))
	if v, ok, err := harness.Value[string](h, "a", "note", ttl); err != nil || !ok || v != "noted at 1000" {
		t.Fatalf("note 99ms after it was written = %q, %v, %v; want it", v, ok, err)
	}
	must(t, h.SetProcessingTime(1100))
	if v, ok, err := harness.Value[string](h, "a", "note", ttl); err != nil || ok {
		t.Fatalf("note 100ms after it was written = %q, %v, %v; want it expired", v, ok, err)
	}
}

func TestASnapshotRestoresIntoANewHarness(t *testing.T) {
	h := newCounter(t)
	must(t, h.SetProcessingTime(500))
	must(t, h.ProcessElement(event{"a", 1}, 1))
	must(t, h.ProcessElement(event{"a", 2}, 2))
	must(t, h.ProcessElement(event{"b", 3}, 30))
	must(t, h.ProcessWatermark(11)) // fires a@11
	snap, err := h.Snapshot()
	must(t, err)

	// What happens after the snapshot is not in it.
	must(t, h.ProcessElement(event{"a", 5}, 40))
	must(t, h.ProcessWatermark(100))
	wantAfter := harness.Values(h.Output())[1:]

	r := newCounter(t, harness.Restore(snap))
	if r.ProcessingTime() != 500 || r.Watermark() != 11 {
		t.Fatalf("restored processing time and watermark = %d, %d; want the snapshot's, 500 and 11", r.ProcessingTime(), r.Watermark())
	}
	if n, _, _ := harness.Value[int64](r, "a", "count"); n != 2 {
		t.Fatalf("restored count of a = %d, want 2", n)
	}
	if got := r.PendingEventTimers(); got != 2 { // a@12, b@40
		t.Fatalf("restored pending event timers = %d, want 2", got)
	}
	if len(r.Output()) != 0 {
		t.Fatalf("a restored harness starts with output %v", r.Output())
	}
	must(t, r.ProcessElement(event{"a", 5}, 40))
	must(t, r.ProcessWatermark(100))
	if got := harness.Values(r.Output()); !slices.Equal(got, wantAfter) {
		t.Fatalf("restored harness emitted %v, want what the original emitted after the snapshot, %v", got, wantAfter)
	}

	other, err := harness.NewProcess(byKey, func() weir.KeyedProcessFunction[string, event, int] {
		return weir.ProcessFunc[string, event, int](func(*weir.KeyedContext[string, int], event) error { return nil })
	}, harness.Restore(snap))
	if err == nil {
		other.Close()
		t.Fatal("a snapshot restored into the harness of another operator")
	}
}

// failing fails in Open when told to, and in OnTimer always.
type failing struct{ inOpen bool }

var errOpen, errTimer = errors.New("open failed"), errors.New("timer failed")

func (f *failing) Open(*weir.StateContext[string]) error {
	if f.inOpen {
		return errOpen
	}
	return nil
}

func (f *failing) ProcessElement(ctx *weir.KeyedContext[string, string], e event) error {
	ctx.RegisterEventTimer(ctx.Timestamp())
	return nil
}

func (f *failing) OnTimer(*weir.KeyedContext[string, string], int64, weir.TimeDomain) error {
	return errTimer
}

func TestErrorsOfOpenAndOnTimerSurface(t *testing.T) {
	_, err := harness.NewProcess(byKey, func() weir.KeyedProcessFunction[string, event, string] { return &failing{inOpen: true} })
	if !errors.Is(err, errOpen) {
		t.Fatalf("NewProcess of a function whose Open fails = %v, want its error", err)
	}
	h, err := harness.NewProcess(byKey, func() weir.KeyedProcessFunction[string, event, string] { return &failing{} })
	must(t, err)
	defer h.Close()
	must(t, h.ProcessElement(event{"a", 1}, 5))
	if err := h.ProcessWatermark(5); !errors.Is(err, errTimer) || !strings.Contains(err.Error(), "event timer") {
		t.Fatalf("a watermark firing a failing timer = %v, want the timer's error", err)
	}
}
