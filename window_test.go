package weir_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weir-stream/weir"
)

type ev struct {
	Key string
	TS  int64
}

func evKey(e ev) string     { return e.Key }
func evTime(e ev) int64     { return e.TS }
func one(ev) int64          { return 1 }
func addI(a, b int64) int64 { return a + b }

// count is an Aggregator counting records.
type count struct{}

func (count) Create() int64             { return 0 }
func (count) Add(acc int64, _ ev) int64 { return acc + 1 }
func (count) Merge(a, b int64) int64    { return a + b }
func (count) Result(acc int64) int64    { return acc }

// orderedPipeline reads events one at a time with a watermark after each,
// so that lateness is deterministic.
func orderedPipeline(events []ev, outOfOrder time.Duration) (*weir.Pipeline, weir.Stream[ev]) {
	p := weir.NewPipeline(weir.WithWatermarkInterval(time.Nanosecond))
	src := weir.FromSource(p, "events", sliceSource[ev]{items: events, one: true},
		weir.WithTimestamps(evTime, outOfOrder))
	return p, src
}

func results(s *sink[weir.Windowed[string, int64]]) []string {
	var out []string
	for _, r := range s.recs {
		out = append(out, fmt.Sprintf("%s [%d,%d) %d", r.Key, r.Window.Start, r.Window.End, r.Value))
	}
	return out
}

func sortedResults(s *sink[weir.Windowed[string, int64]]) []string {
	out := results(s)
	slices.Sort(out)
	return out
}

func TestTumblingOutOfOrderWithinBound(t *testing.T) {
	events := []ev{{"a", 100}, {"b", 900}, {"a", 1200}, {"a", 700}, {"b", 1999}, {"a", 2000}, {"b", 1500}}
	p, src := orderedPipeline(events, time.Second)
	out := &sink[weir.Windowed[string, int64]]{}
	weir.To(weir.AggregateWindow(weir.WindowBy(weir.KeyBy(src, evKey), weir.Tumbling(time.Second)), count{}), "out", out)
	run(t, p)
	want := []string{"a [0,1000) 2", "a [1000,2000) 1", "a [2000,3000) 1", "b [0,1000) 1", "b [1000,2000) 2"}
	if got := sortedResults(out); !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestLateRecordsGoToSideOutput(t *testing.T) {
	events := []ev{{"a", 1000}, {"a", 2500}, {"a", 1500}, {"a", 2600}}
	p, src := orderedPipeline(events, 0)
	late := weir.NewOutputTag[ev]("late")
	out := &sink[weir.Windowed[string, int64]]{}
	w := weir.WindowBy(weir.KeyBy(src, evKey), weir.Tumbling(time.Second)).LateTo(late)
	weir.To(weir.AggregateWindow(w, count{}), "out", out)
	lateOut := &sink[ev]{}
	weir.To(weir.SideOutput(late), "late", lateOut)
	run(t, p)
	want := []string{"a [1000,2000) 1", "a [2000,3000) 2"}
	if got := results(out); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if !slices.Equal(lateOut.recs, []ev{{"a", 1500}}) {
		t.Fatalf("late records: got %v, want [{a 1500}]", lateOut.recs)
	}
}

// lateDropped sums the late records the tasks of p dropped.
func lateDropped(p *weir.Pipeline) int64 {
	var n int64
	for _, m := range p.Metrics() {
		n += m.LateDropped
	}
	return n
}

// A late record with no side output to go to is dropped and counted, in
// tumbling and session windows; with a side output it is not counted.
func TestLateRecordsWithoutSideOutputAreCounted(t *testing.T) {
	events := []ev{{"a", 1000}, {"a", 2500}, {"a", 1500}, {"a", 5600}, {"b", 1200}}
	for name, assigner := range map[string]weir.WindowAssigner{"tumbling": weir.Tumbling(time.Second), "session": weir.Session(500 * time.Millisecond)} {
		p, src := orderedPipeline(events, 0)
		weir.To(weir.AggregateWindow(weir.WindowBy(weir.KeyBy(src, evKey), assigner), count{}), "out", &sink[weir.Windowed[string, int64]]{})
		run(t, p)
		if got := lateDropped(p); got != 2 {
			t.Errorf("%s: %d late records dropped, want 2", name, got)
		}

		p, src = orderedPipeline(events, 0)
		late := weir.NewOutputTag[ev]("late")
		weir.To(weir.AggregateWindow(weir.WindowBy(weir.KeyBy(src, evKey), assigner).LateTo(late), count{}), "out", &sink[weir.Windowed[string, int64]]{})
		lateOut := &sink[ev]{}
		weir.To(weir.SideOutput(late), "late", lateOut)
		run(t, p)
		if got := lateDropped(p); got != 0 || len(lateOut.recs) != 2 {
			t.Errorf("%s with a side output: %d dropped, %v sent to it; want 0 and 2", name, got, lateOut.recs)
		}
	}
}

func TestAllowedLatenessRefires(t *testing.T) {
	// The watermark passes 1999 at 2500; 1500 is late but within 1s of
	// lateness, so [1000,2000) fires again. At 3100 the lateness of
	// [1000,2000) expires (1999+1000 <= 3099) and 1700 is dropped.
	events := []ev{{"a", 1000}, {"a", 2500}, {"a", 1500}, {"a", 3100}, {"a", 1700}}
	p, src := orderedPipeline(events, 0)
	late := weir.NewOutputTag[ev]("late")
	out := &sink[weir.Windowed[string, int64]]{}
	w := weir.WindowBy(weir.KeyBy(src, evKey), weir.Tumbling(time.Second)).AllowedLateness(time.Second).LateTo(late)
	weir.To(weir.AggregateWindow(w, count{}), "out", out)
	lateOut := &sink[ev]{}
	weir.To(weir.SideOutput(late), "late", lateOut)
	run(t, p)
	want := []string{"a [1000,2000) 1", "a [1000,2000) 2", "a [2000,3000) 1", "a [3000,4000) 1"}
	if got := results(out); !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if !slices.Equal(lateOut.recs, []ev{{"a", 1700}}) {
		t.Fatalf("late records: got %v, want [{a 1700}]", lateOut.recs)
	}
}

func TestSessionWindowsMerge(t *testing.T) {
	events := []ev{{"a", 0}, {"a", 500}, {"a", 3000}, {"b", 100}, {"a", 2000}, {"a", 8000}, {"a", 6000}, {"a", 7000}}
	p, src := orderedPipeline(events, 10*time.Second)
	out := &sink[weir.Windowed[string, int64]]{}
	weir.To(weir.AggregateWindow(weir.WindowBy(weir.KeyBy(src, evKey), weir.Session(time.Second)), count{}), "out", out)
	run(t, p)
	// [2000,3000) touches [3000,4000): they merge. 6000, 7000 and 8000
	// chain into one session once 7000 arrives.
	want := []string{"a [0,1500) 2", "a [2000,4000) 2", "a [6000,9000) 3", "b [100,1100) 1"}
	if got := sortedResults(out); !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestSlidingWindowsReduce(t *testing.T) {
	events := []ev{{"a", 0}, {"a", 1500}, {"a", 2500}}
	p, src := orderedPipeline(events, time.Second)
	sums := weir.ReduceWindow(weir.WindowBy(weir.KeyBy(src, evKey), weir.Sliding(2*time.Second, time.Second)),
		func(a, b ev) ev { return ev{a.Key, a.TS + b.TS} })
	out := &sink[weir.Windowed[string, int64]]{}
	weir.To(weir.Map(sums, func(w weir.Windowed[string, ev]) weir.Windowed[string, int64] {
		return weir.Windowed[string, int64]{Key: w.Key, Window: w.Window, Value: w.Value.TS}
	}), "out", out)
	run(t, p)
	want := []string{"a [-1000,1000) 0", "a [0,2000) 1500", "a [1000,3000) 4000", "a [2000,4000) 2500"}
	if got := sortedResults(out); !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestProcessWindowSeesAllRecords(t *testing.T) {
	events := []ev{{"a", 10}, {"a", 20}, {"b", 30}, {"a", 1010}}
	p, src := orderedPipeline(events, time.Second)
	res := weir.ProcessWindow(weir.WindowBy(weir.KeyBy(src, evKey), weir.Tumbling(time.Second)),
		func(k string, w weir.Window, recs []ev, emit func(string)) error {
			emit(fmt.Sprintf("%s@%d:%d", k, w.Start, len(recs)))
			return nil
		})
	out := &sink[string]{}
	weir.To(res, "out", out)
	run(t, p)
	got := out.sorted(func(a, b string) bool { return a < b })
	if want := []string{"a@0:2", "a@1000:1", "b@0:1"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestEventTimeWindowRejectsRecordsWithoutTimestamp(t *testing.T) {
	p := weir.NewPipeline()
	src := weir.FromSource(p, "events", sliceSource[ev]{items: []ev{{"a", 1}}})
	// A process function may stamp its output, so the pipeline builds;
	// the window checks the records it gets.
	pass := weir.ProcessStream(src, func(ctx *weir.RecordContext[ev], e ev) error { ctx.Emit(e); return nil })
	weir.To(weir.AggregateWindow(weir.WindowBy(weir.KeyBy(pass, evKey), weir.Tumbling(time.Second)), count{}), "out", &sink[weir.Windowed[string, int64]]{})
	err := p.Run(t.Context())
	if err == nil || !contains(err.Error(), "without event time") {
		t.Fatalf("got %v, want an error about a record without event time", err)
	}
}

func TestWindowValidation(t *testing.T) {
	p := weir.NewPipeline()
	src := weir.FromSource(p, "events", sliceSource[ev]{})
	weir.To(weir.AggregateWindow(weir.WindowBy(weir.KeyBy(src, evKey), weir.Sliding(time.Second, 2*time.Second)), count{}), "out", &sink[weir.Windowed[string, int64]]{})
	if _, err := p.Explain(); err == nil || !contains(err.Error(), "slide must not exceed") {
		t.Fatalf("got %v, want a slide error", err)
	}
}

func TestCountAggregatorInfersTypes(t *testing.T) {
	events := []ev{{"a", 1}, {"a", 2}, {"b", 3}}
	p, src := orderedPipeline(events, time.Second)
	out := &sink[weir.Windowed[string, int64]]{}
	weir.To(weir.AggregateWindow(weir.WindowBy(weir.KeyBy(src, evKey), weir.Tumbling(time.Second)), weir.Count[ev]()), "out", out)
	run(t, p)
	if got, want := sortedResults(out), []string{"a [0,1000) 2", "b [0,1000) 1"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// Sliding windows that overlap twelve at a time, over keys spread across
// key groups (each a bucket of its own) and two subtasks, with snapshots
// taken while they fill: every key's count in every window is exact.
func TestManyOverlappingSlidingWindowsCountExactly(t *testing.T) {
	var events []ev
	want := map[string]int64{}
	for i := range 150000 {
		e := ev{fmt.Sprintf("k%d", i%97), int64(i * 7)}
		events = append(events, e)
		for start := e.TS - e.TS%1000 - 11000; start <= e.TS; start += 1000 {
			if e.TS < start+12000 {
				want[fmt.Sprintf("%s [%d,%d) ", e.Key, start, start+12000)]++
			}
		}
	}
	// At-least-once: the test's sink does not commit; without failures the
	// output is exact all the same.
	p := weir.NewPipeline(weir.WithParallelism(2), weir.WithGuarantee(weir.AtLeastOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 5 * time.Millisecond}))
	src := weir.FromSource(p, "events", sliceSource[ev]{items: events, one: true, pauses: 3}, weir.WithTimestamps(evTime, 0))
	out := &sink[weir.Windowed[string, int64]]{}
	weir.To(weir.AggregateWindow(weir.WindowBy(weir.KeyBy(src, evKey), weir.Sliding(12*time.Second, time.Second)), count{}), "out", out)
	run(t, p)
	if n := len(p.Report().Checkpoints); n < 3 {
		t.Fatalf("%d checkpoints completed during the run, want snapshots while the windows fill", n)
	}
	got := sortedResults(out)
	var exp []string
	for k, n := range want {
		exp = append(exp, fmt.Sprintf("%s%d", k, n))
	}
	slices.Sort(exp)
	if !slices.Equal(got, exp) {
		t.Fatalf("got %d results, want %d; first got %q, first want %q", len(got), len(exp), got[:min(3, len(got))], exp[:min(3, len(exp))])
	}
}
