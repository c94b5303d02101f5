package weir_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
)

// runningSum keeps a per-key sum in value state, the per-key history in
// list state and per-key distinct timestamps in map state, and emits a
// summary per key at the end of input through an event-time timer.
type runningSum struct {
	sum      *weir.ValueState[int64, string]
	history  *weir.ListState[int64, string]
	distinct *weir.MapState[int64, bool, string]
	maxTS    *weir.ReducingState[int64, string]
}

func (f *runningSum) Open(sc *weir.StateContext[string]) error {
	f.sum = weir.NewValueState[int64](sc, "sum")
	f.history = weir.NewListState[int64](sc, "history")
	f.distinct = weir.NewMapState[int64, bool](sc, "distinct")
	f.maxTS = weir.NewReducingState(sc, "max", func(a, b int64) int64 { return max(a, b) })
	return nil
}

func (f *runningSum) ProcessElement(ctx *weir.KeyedContext[string, string], e ev) error {
	s, _ := f.sum.Value()
	f.sum.Update(s + e.TS)
	f.history.Add(e.TS)
	f.distinct.Put(e.TS, true)
	f.maxTS.Add(e.TS)
	ctx.RegisterEventTimer(weir.EndOfTime)
	return nil
}

func (f *runningSum) OnTimer(ctx *weir.KeyedContext[string, string], ts int64, d weir.TimeDomain) error {
	s, _ := f.sum.Value()
	m, _ := f.maxTS.Get()
	ctx.Emit(fmt.Sprintf("%s sum=%d n=%d distinct=%d max=%d", ctx.Key(), s, len(f.history.Get()), f.distinct.Len(), m))
	f.sum.Clear()
	f.history.Clear()
	f.distinct.Clear()
	return nil
}

func TestKeyedProcessState(t *testing.T) {
	var events []ev
	for i := range 1000 {
		events = append(events, ev{fmt.Sprintf("k%d", i%7), int64(i % 100)})
	}
	for _, par := range []int{1, 2, 8} {
		p := weir.NewPipeline(weir.WithParallelism(par))
		src := weir.FromSource(p, "events", sliceSource[ev]{items: events}, weir.WithTimestamps(evTime, time.Hour))
		res := weir.Process(weir.KeyBy(src, evKey), func() weir.KeyedProcessFunction[string, ev, string] { return &runningSum{} })
		out := &sink[string]{}
		weir.To(res, "out", out)
		run(t, p)
		got := out.sorted(func(a, b string) bool { return a < b })
		var want []string
		for k := range 7 {
			var sum, n, mx int64
			seen := map[int64]bool{}
			for _, e := range events {
				if e.Key == fmt.Sprintf("k%d", k) {
					sum += e.TS
					n++
					seen[e.TS] = true
					mx = max(mx, e.TS)
				}
			}
			want = append(want, fmt.Sprintf("k%d sum=%d n=%d distinct=%d max=%d", k, sum, n, len(seen), mx))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("parallelism %d: got %q\nwant %q", par, got, want)
		}
	}
}

func TestProcessErrorFailsJob(t *testing.T) {
	p := weir.NewPipeline(weir.WithParallelism(2))
	src := weir.FromSource(p, "events", sliceSource[ev]{items: []ev{{"a", 1}, {"bad", 2}, {"c", 3}}})
	res := weir.Process(weir.KeyBy(src, evKey), func() weir.KeyedProcessFunction[string, ev, string] {
		return weir.ProcessFunc[string, ev, string](func(ctx *weir.KeyedContext[string, string], e ev) error {
			if e.Key == "bad" {
				return errors.New("cannot handle bad")
			}
			return nil
		})
	}, weir.Name("checker"))
	weir.To(res, "out", &sink[string]{})
	err := p.Run(context.Background())
	if err == nil || !contains(err.Error(), "cannot handle bad") || !contains(err.Error(), "checker") {
		t.Fatalf("got %v, want the function's error naming the operator", err)
	}
}

func TestPanicFailsJob(t *testing.T) {
	p := weir.NewPipeline()
	src := weir.FromSource(p, "events", sliceSource[ev]{items: []ev{{"a", 1}}})
	weir.To(weir.Map(src, func(e ev) int { panic("boom") }, weir.Name("exploder")), "out", &sink[int]{})
	err := p.Run(context.Background())
	if err == nil || !contains(err.Error(), "boom") || !contains(err.Error(), "exploder") {
		t.Fatalf("got %v, want the panic naming the task", err)
	}
}

// endless never ends and produces a record every Read.
type endless struct{}

func (endless) Open(context.Context, connector.SubtaskInfo, connector.Position) (connector.Reader[int64], error) {
	return &endlessReader{}, nil
}

type endlessReader struct{ n int64 }

func (r *endlessReader) Read(_ context.Context, buf []int64) (int, error) {
	for i := range buf {
		r.n++
		buf[i] = r.n
	}
	return len(buf), nil
}
func (r *endlessReader) Position() connector.Position { return nil }
func (r *endlessReader) Close() error                 { return nil }

func TestCancellationStopsEverything(t *testing.T) {
	p := weir.NewPipeline(weir.WithParallelism(2))
	src := weir.FromSource(p, "endless", connector.Source[int64](endless{}))
	keyed := weir.KeyBy(src, func(v int64) int64 { return v % 100 })
	res := weir.Process(keyed, func() weir.KeyedProcessFunction[int64, int64, int64] {
		return weir.ProcessFunc[int64, int64, int64](func(ctx *weir.KeyedContext[int64, int64], v int64) error {
			ctx.Emit(v)
			return nil
		})
	})
	weir.To(res, "out", &sink[int64]{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := p.Run(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the context's deadline error", err)
	}
	// goleak in TestMain checks that no goroutine survived.
}

// waitingSource emits its items, then reports no data (blocking briefly
// each time, as readers should) until release is closed, then ends.
type waitingSource struct {
	items   []ev
	release chan struct{}
}

func (s waitingSource) Open(context.Context, connector.SubtaskInfo, connector.Position) (connector.Reader[ev], error) {
	return &waitingReader{s: s}, nil
}

type waitingReader struct {
	s    waitingSource
	sent bool
}

func (r *waitingReader) Read(ctx context.Context, buf []ev) (int, error) {
	if !r.sent {
		r.sent = true
		return copy(buf, r.s.items), nil
	}
	select {
	case <-r.s.release:
		return 0, errEOF
	case <-time.After(10 * time.Millisecond):
		return 0, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}
func (r *waitingReader) Position() connector.Position { return nil }
func (r *waitingReader) Close() error                 { return nil }

// notifySink closes done once it has received n records.
type notifySink struct {
	sink[string]
	n    int
	done chan struct{}
}

func (s *notifySink) Open(context.Context, connector.SubtaskInfo) (connector.Writer[string], error) {
	return s, nil
}

func (s *notifySink) Write(ctx context.Context, b []string) error {
	s.sink.Write(ctx, b)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.recs) == s.n {
		close(s.done)
	}
	return nil
}

func TestProcessingTimeTimers(t *testing.T) {
	release := make(chan struct{})
	p := weir.NewPipeline()
	src := weir.FromSource(p, "events", connector.Source[ev](waitingSource{items: []ev{{"a", 1}, {"b", 2}}, release: release}))
	res := weir.Process(weir.KeyBy(src, evKey), func() weir.KeyedProcessFunction[string, ev, string] {
		return &procTimer{}
	})
	out := &notifySink{n: 2, done: release}
	weir.To(res, "out", connector.Sink[string](out))
	run(t, p)
	got := out.sorted(func(a, b string) bool { return a < b })
	if want := []string{"timer a", "timer b"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

type procTimer struct{}

func (procTimer) ProcessElement(ctx *weir.KeyedContext[string, string], e ev) error {
	ctx.RegisterProcessingTimer(ctx.ProcessingTime() + 1)
	return nil
}

func (procTimer) OnTimer(ctx *weir.KeyedContext[string, string], ts int64, d weir.TimeDomain) error {
	if d != weir.ProcessingTime {
		return fmt.Errorf("got domain %v, want processing time", d)
	}
	ctx.Emit("timer " + ctx.Key())
	return nil
}

// An idle source must not hold back the watermark: with an idle timeout,
// windows fire on the other source's watermark while the idle one is
// silent. Without idleness this test would time out, as the idle source
// only ends once the window results arrived.
func TestIdleSourceDoesNotHoldBackWatermark(t *testing.T) {
	release := make(chan struct{})
	p := weir.NewPipeline(weir.WithIdleTimeout(20*time.Millisecond), weir.WithWatermarkInterval(5*time.Millisecond))
	idle := weir.FromSource(p, "idle", connector.Source[ev](waitingSource{release: release}), weir.WithTimestamps(evTime, 0))
	busy := weir.FromSource(p, "busy", connector.Source[ev](waitingSource{items: []ev{{"a", 100}, {"a", 200}, {"b", 2500}}, release: release}),
		weir.WithTimestamps(evTime, 0))
	counts := weir.AggregateWindow(weir.WindowBy(weir.KeyBy(weir.Union(idle, busy), evKey), weir.Tumbling(time.Second)), count{})
	fired := weir.Map(counts, func(w weir.Windowed[string, int64]) string {
		return fmt.Sprintf("%s@%d:%d", w.Key, w.Window.Start, w.Value)
	})
	out := &notifySink{n: 1, done: release}
	weir.To(fired, "out", connector.Sink[string](out))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatalf("%v (the idle source held back the watermark)", err)
	}
	got := out.sorted(func(a, b string) bool { return a < b })
	if len(got) != 2 || got[0] != "a@0:2" || got[1] != "b@2000:1" {
		t.Fatalf("got %q, want [a@0:2 b@2000:1]", got)
	}
}

// slowWriter takes a millisecond per batch.
type slowWriter struct{ sink[int64] }

func (s *slowWriter) Open(context.Context, connector.SubtaskInfo) (connector.Writer[int64], error) {
	return s, nil
}

func (s *slowWriter) Write(ctx context.Context, b []int64) error {
	time.Sleep(time.Millisecond)
	return s.sink.Write(ctx, b)
}

// A fast source in front of a slow sink spends time backpressured, and
// the sink's task time waiting for input is counted as idle.
func TestBusyIdleBackpressuredTime(t *testing.T) {
	p := weir.NewPipeline(weir.WithChaining(false))
	src := weir.FromSource(p, "fast", sliceSource[int64]{items: ints(200_000)})
	weir.To(src, "slow", connector.Sink[int64](&slowWriter{}))
	run(t, p)
	ms := p.Metrics()
	if len(ms) != 2 {
		t.Fatalf("got %d tasks", len(ms))
	}
	source, sinkTask := ms[0].Subtasks[0], ms[1].Subtasks[0]
	if source.Backpressured <= 0 {
		t.Errorf("the source was never backpressured: %+v", source)
	}
	if sinkTask.Busy <= 0 {
		t.Errorf("the slow sink's task was never busy: %+v", sinkTask)
	}
}

// The metrics name the input that holds back a subtask's watermark: here
// the source that stopped sending while the other went on. The job runs
// in a synctest bubble, so its clock is fake and synctest.Wait says when
// every goroutine has settled.
func TestWatermarkHeldBackBy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		p := weir.NewPipeline(weir.WithWatermarkInterval(time.Millisecond))
		slow := weir.FromSource(p, "stuck", connector.Source[ev](waitingSource{items: []ev{{"a", 1}}, release: release}), weir.WithTimestamps(evTime, 0))
		fast := weir.FromSource(p, "moving", connector.Source[ev](waitingSource{items: []ev{{"b", 5000}}, release: release}), weir.WithTimestamps(evTime, 0))
		counts := weir.AggregateWindow(weir.WindowBy(weir.KeyBy(weir.Union(slow, fast), evKey), weir.Tumbling(time.Second)), count{})
		weir.To(counts, "out", &sink[weir.Windowed[string, int64]]{})
		done := make(chan error, 1)
		go func() { done <- p.Run(context.Background()) }()
		// Let the sources read their record and, a fake 10ms later, emit
		// their watermarks; then every goroutine waits.
		time.Sleep(50 * time.Millisecond)
		synctest.Wait()
		var held []string
		for _, m := range p.Metrics() {
			for _, s := range m.Subtasks {
				if s.WatermarkHeldBackBy != "" {
					held = append(held, s.WatermarkHeldBackBy)
				}
			}
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if len(held) != 1 || held[0] != "stuck [subtask 0]" {
			t.Fatalf("watermark held back by %q, want the stuck source", held)
		}
	})
}

func TestTimerWithoutHandlerFailsClearly(t *testing.T) {
	p := weir.NewPipeline()
	src := weir.FromSource(p, "events", sliceSource[ev]{items: []ev{{"a", 1}}}, weir.WithTimestamps(evTime, 0))
	res := weir.Process(weir.KeyBy(src, evKey), func() weir.KeyedProcessFunction[string, ev, string] {
		return weir.ProcessFunc[string, ev, string](func(ctx *weir.KeyedContext[string, string], e ev) error {
			ctx.RegisterEventTimer(weir.EndOfTime)
			return nil
		})
	}, weir.Name("timed"))
	weir.To(res, "out", &sink[string]{})
	err := p.Run(context.Background())
	if err == nil || !contains(err.Error(), "no OnTimer") || !contains(err.Error(), "timed") {
		t.Fatalf("got %v, want an error naming the operator and the missing OnTimer", err)
	}
}
