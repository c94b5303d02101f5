package weir_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weir-stream/weir"
)

// bruteTumbling counts events per key and tumbling window of size ms.
func bruteTumbling(events []ev, size int64) []string {
	n := map[string]int64{}
	for _, e := range events {
		start := e.TS - e.TS%size
		n[fmt.Sprintf("%s [%d,%d)", e.Key, start, start+size)]++
	}
	var out []string
	for k, c := range n {
		out = append(out, fmt.Sprintf("%s %d", k, c))
	}
	slices.Sort(out)
	return out
}

// shuffledEvents returns n events over keys, each at most bound ms
// behind the latest before it.
func shuffledEvents(n int, bound int64) []ev {
	out := make([]ev, n)
	for i := range out {
		ts := int64(i)*7 - int64((i*31)%int(bound))
		out[i] = ev{Key: fmt.Sprintf("k%d", i%5), TS: max(ts, 0)}
	}
	return out
}

func TestAssignTimestampsMidStreamFeedsEventTimeWindows(t *testing.T) {
	events := shuffledEvents(2000, 40)
	p := weir.NewPipeline(weir.WithParallelism(2), weir.WithWatermarkInterval(time.Millisecond))
	src := weir.FromSource(p, "events", sliceSource[ev]{items: events}) // no event time
	stamped := weir.AssignTimestamps(weir.Filter(src, func(ev) bool { return true }), evTime, 50*time.Millisecond)
	out := &sink[weir.Windowed[string, int64]]{}
	weir.To(weir.AggregateWindow(weir.WindowBy(weir.KeyBy(stamped, evKey), weir.Tumbling(100*time.Millisecond)), count{}), "out", out)
	run(t, p)
	if got, want := sortedResults(out), bruteTumbling(events, 100); !slices.Equal(got, want) {
		t.Fatalf("got %d windows, want %d:\ngot  %q\nwant %q", len(got), len(want), got, want)
	}
}

// The stream's watermark after AssignTimestamps is the one generated
// there: the source's, far behind, does not hold the window back, and a
// record behind the generated watermark is late.
func TestAssignTimestampsReplacesTheUpstreamWatermark(t *testing.T) {
	events := []ev{{"a", 1000}, {"a", 2500}, {"a", 1500}, {"a", 2600}}
	p := weir.NewPipeline(weir.WithWatermarkInterval(time.Nanosecond))
	// The source stamps every record 0, with no bound: its watermark
	// would make nothing late.
	src := weir.FromSource(p, "events", sliceSource[ev]{items: events, one: true},
		weir.WithTimestamps(func(ev) int64 { return 0 }, time.Hour))
	late := weir.NewOutputTag[ev]("late")
	stamped := weir.AssignTimestamps(src, evTime, 0)
	w := weir.WindowBy(weir.KeyBy(stamped, evKey), weir.Tumbling(time.Second)).LateTo(late)
	out, lateOut := &sink[weir.Windowed[string, int64]]{}, &sink[ev]{}
	weir.To(weir.AggregateWindow(w, count{}), "out", out)
	weir.To(weir.SideOutput(late), "late", lateOut)
	run(t, p)
	if got, want := results(out), []string{"a [1000,2000) 1", "a [2000,3000) 2"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if !slices.Equal(lateOut.recs, []ev{{"a", 1500}}) {
		t.Fatalf("late records: got %v, want [{a 1500}]", lateOut.recs)
	}
}

func TestEventTimeWindowOnAStreamWithoutTimestampsFailsTheBuild(t *testing.T) {
	p := weir.NewPipeline()
	src := weir.FromSource(p, "events", sliceSource[ev]{items: []ev{{"a", 1}}})
	m := weir.Map(src, func(e ev) ev { return e })
	weir.To(weir.AggregateWindow(weir.WindowBy(weir.KeyBy(m, evKey), weir.Tumbling(time.Second)), count{}, weir.Name("per-second")),
		"out", &sink[weir.Windowed[string, int64]]{})
	_, err := p.Explain()
	if err == nil || !contains(err.Error(), `operator "per-second" (event-time window tumbling(1s)) needs event time, but its input has none`) {
		t.Fatalf("Explain: got %v, want an error naming the window", err)
	}
	if err := p.Run(t.Context()); err == nil || !contains(err.Error(), `"per-second"`) {
		t.Fatalf("Run: got %v, want the same error", err)
	}
}

func TestEventTimeOperatorsAfterAssignTimestampsOrUnionChecks(t *testing.T) {
	p := weir.NewPipeline()
	timed := weir.FromSource(p, "timed", sliceSource[ev]{}, weir.WithTimestamps(evTime, 0))
	plain := weir.FromSource(p, "plain", sliceSource[ev]{})
	ok := weir.Union(timed, weir.AssignTimestamps(plain, evTime, 0))
	weir.To(weir.AggregateWindow(weir.WindowBy(weir.KeyBy(ok, evKey), weir.Tumbling(time.Second)), count{}), "ok", &sink[weir.Windowed[string, int64]]{})
	if _, err := p.Explain(); err != nil {
		t.Fatalf("stamped inputs: %v", err)
	}
	bad := weir.Union(timed, plain)
	weir.To(weir.IntervalJoin(weir.KeyBy(bad, evKey), weir.KeyBy(timed, evKey), 0, time.Second, func(a, b ev) ev { return a }),
		"bad", &sink[ev]{})
	if _, err := p.Explain(); err == nil || !contains(err.Error(), `operator "interval-join" (interval join) needs event time`) {
		t.Fatalf("a union with an unstamped input: got %v", err)
	}
}
