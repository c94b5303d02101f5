package weir_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
)

// firing is one firing of a window as the tests see it: the key, the
// window and the timestamps of the records the window function got.
func firing(key string, w weir.Window, recs []ev) string {
	ts := make([]string, len(recs))
	for i, r := range recs {
		ts[i] = fmt.Sprint(r.TS)
	}
	return fmt.Sprintf("%s [%d,%d) %s", key, w.Start, w.End, strings.Join(ts, ","))
}

// collectFirings runs w with a window function recording each firing.
func collectFirings(t *testing.T, p *weir.Pipeline, w weir.WindowedStream[string, ev]) []string {
	t.Helper()
	out := &sink[string]{}
	weir.To(weir.ProcessWindow(w, func(key string, win weir.Window, recs []ev, emit func(string)) error {
		emit(firing(key, win, recs))
		return nil
	}), "out", out)
	run(t, p)
	return out.recs
}

// randomEvents returns n events of keys a..e with increasing, distinct
// timestamps.
func randomEvents(n int, seed uint64) []ev {
	r := rand.New(rand.NewPCG(seed, 1))
	events := make([]ev, n)
	ts := int64(0)
	for i := range events {
		ts += 1 + r.Int64N(150)
		events[i] = ev{Key: string(rune('a' + r.IntN(5))), TS: ts}
	}
	return events
}

// countFirings is the brute-force reference of count windows: per key,
// every slide records, the last size records (slide == size: tumbling).
func countFirings(events []ev, size, slide int) []string {
	var out []string
	seen := map[string][]ev{}
	for _, e := range events {
		l := append(seen[e.Key], e)
		seen[e.Key] = l
		if len(l)%slide == 0 {
			out = append(out, firing(e.Key, weir.GlobalWindow, l[max(0, len(l)-size):]))
		}
	}
	return out
}

func TestCountWindowsMatchBruteForce(t *testing.T) {
	events := randomEvents(500, 7)
	for _, c := range []struct{ size, slide int }{{5, 5}, {1, 1}, {7, 3}, {4, 1}, {6, 6}} {
		t.Run(fmt.Sprintf("size%d-slide%d", c.size, c.slide), func(t *testing.T) {
			p := weir.NewPipeline(weir.WithParallelism(3))
			src := weir.FromSource(p, "events", sliceSource[ev]{items: events}, weir.WithTimestamps(evTime, time.Hour), weir.SourceParallelism(1))
			ks := weir.KeyBy(src, evKey)
			var w weir.WindowedStream[string, ev]
			if c.size == c.slide {
				w = weir.CountWindow(ks, int64(c.size))
			} else {
				w = weir.CountWindow(ks, int64(c.size), int64(c.slide))
			}
			got := collectFirings(t, p, w)
			want := countFirings(events, c.size, c.slide)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("got %d firings, want %d\ngot  %q\nwant %q", len(got), len(want), got, want)
			}
		})
	}
}

// A count trigger purging over event-time windows fires every n records
// of a key and window; the records left at the window's end are dropped
// with it.
func TestPurgingCountTriggerOnTumblingWindowsMatchesBruteForce(t *testing.T) {
	events := randomEvents(400, 11)
	p, src := orderedPipeline(events, 0)
	w := weir.WindowBy(weir.KeyBy(src, evKey), weir.Tumbling(time.Second)).Trigger(weir.PurgingTrigger(weir.CountTrigger[ev](3)))
	got := collectFirings(t, p, w)
	var want []string
	held := map[string][]ev{}
	for _, e := range events {
		win := weir.Window{Start: e.TS - e.TS%1000, End: e.TS - e.TS%1000 + 1000}
		k := fmt.Sprint(e.Key, win)
		if held[k] = append(held[k], e); len(held[k]) == 3 {
			want = append(want, firing(e.Key, win, held[k]))
			held[k] = nil
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// Early firings: a continuous event-time trigger fires a one-second
// window every 250ms of event time, with what the window holds so far
// (no purging), and at its end.
func TestContinuousEventTimeTriggerFiresEarly(t *testing.T) {
	events := []ev{{"a", 100}, {"a", 350}, {"a", 600}, {"a", 1100}, {"a", 1400}}
	for _, purge := range []bool{false, true} {
		p, src := orderedPipeline(events, 0)
		trig := weir.ContinuousEventTimeTrigger[ev](250 * time.Millisecond)
		if purge {
			trig = weir.PurgingTrigger(trig)
		}
		got := collectFirings(t, p, weir.WindowBy(weir.KeyBy(src, evKey), weir.Tumbling(time.Second)).Trigger(trig))
		want := []string{
			"a [0,1000) 100,350", "a [0,1000) 100,350,600", "a [0,1000) 100,350,600", "a [0,1000) 100,350,600",
			"a [1000,2000) 1100,1400", "a [1000,2000) 1100,1400", "a [1000,2000) 1100,1400", "a [1000,2000) 1100,1400"}
		if purge {
			// Each firing empties the window; empty windows emit nothing.
			want = []string{"a [0,1000) 100,350", "a [0,1000) 600", "a [1000,2000) 1100,1400"}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("purge %v: got %q\nwant %q", purge, got, want)
		}
	}
}

// An evictor keeps the last records of an event-time window, which fires
// at its end (the default trigger).
func TestEvictorsOnEventTimeWindows(t *testing.T) {
	events := []ev{{"a", 100}, {"a", 200}, {"a", 300}, {"a", 900}, {"a", 1500}, {"b", 1600}}
	p, src := orderedPipeline(events, 0)
	got := collectFirings(t, p, weir.WindowBy(weir.KeyBy(src, evKey), weir.Tumbling(time.Second)).Evictor(weir.CountEvictor[ev](2)))
	want := []string{"a [0,1000) 300,900", "a [1000,2000) 1500", "b [1000,2000) 1600"}
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Fatalf("count evictor: got %q\nwant %q", got, want)
	}
	p, src = orderedPipeline(events, 0)
	got = collectFirings(t, p, weir.WindowBy(weir.KeyBy(src, evKey), weir.Tumbling(time.Second)).Evictor(weir.TimeEvictor[ev](700*time.Millisecond)))
	want = []string{"a [0,1000) 300,900", "a [1000,2000) 1500", "b [1000,2000) 1600"}
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Fatalf("time evictor: got %q\nwant %q", got, want)
	}
}

func TestTriggerMisuseFailsTheBuild(t *testing.T) {
	for name, c := range map[string]struct {
		build func(ks weir.KeyedStream[string, ev]) weir.WindowedStream[string, ev]
		want  string
	}{
		"session": {func(ks weir.KeyedStream[string, ev]) weir.WindowedStream[string, ev] {
			return weir.WindowBy(ks, weir.Session(time.Second)).Trigger(weir.CountTrigger[ev](2))
		}, "session windows take no custom trigger"},
		"processing-time session": {func(ks weir.KeyedStream[string, ev]) weir.WindowedStream[string, ev] {
			return weir.WindowBy(ks, weir.SessionProcessingTime(time.Second)).Evictor(weir.CountEvictor[ev](2))
		}, "session windows take no custom trigger or evictor"},
		"global": {func(ks weir.KeyedStream[string, ev]) weir.WindowedStream[string, ev] {
			return weir.WindowBy(ks, weir.GlobalWindows())
		}, "global windows need a trigger"},
		"count": {func(ks weir.KeyedStream[string, ev]) weir.WindowedStream[string, ev] {
			return weir.CountWindow(ks, 3, 4)
		}, "1 <= slide <= size"},
		"trigger": {func(ks weir.KeyedStream[string, ev]) weir.WindowedStream[string, ev] {
			return weir.WindowBy(ks, weir.Tumbling(time.Second)).Trigger(weir.CountTrigger[ev](0))
		}, "CountTrigger needs a count of at least 1"},
	} {
		p := weir.NewPipeline()
		src := weir.FromSource(p, "events", sliceSource[ev]{items: []ev{{"a", 1}}}, weir.WithTimestamps(evTime, 0))
		weir.To(weir.AggregateWindow(c.build(weir.KeyBy(src, evKey)), count{}), "out", &sink[weir.Windowed[string, int64]]{})
		if err := p.Run(t.Context()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %q", name, err, c.want)
		}
	}
}

// tickingSource yields one event per Read, a fake 30ms apart (the test
// runs in a synctest bubble), with no event time.
type tickingSource struct{ n int }

func (s tickingSource) Open(context.Context, connector.SubtaskInfo, connector.Position) (connector.Reader[ev], error) {
	return &tickingReader{n: s.n}, nil
}

type tickingReader struct{ i, n int }

func (r *tickingReader) Read(_ context.Context, buf []ev) (int, error) {
	if r.i == r.n {
		return 0, errEOF
	}
	time.Sleep(30 * time.Millisecond)
	buf[0] = ev{Key: "a", TS: int64(r.i)}
	r.i++
	return 1, nil
}

func (r *tickingReader) Position() connector.Position { return nil }
func (r *tickingReader) Close() error                 { return nil }

// Processing-time windows group records by the clock at which they
// arrive, need no event time, and fire when the clock passes their end;
// those still open when the bounded input ends fire then.
func TestTumblingProcessingTimeWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := weir.NewPipeline()
		src := weir.FromSource(p, "ticks", connector.Source[ev](tickingSource{n: 20}), weir.SourceParallelism(1))
		w := weir.WindowBy(weir.KeyBy(src, evKey), weir.TumblingProcessingTime(100*time.Millisecond))
		got := collectFirings(t, p, w)
		seen := 0
		for _, f := range got {
			_, recs, _ := strings.Cut(f, ") ")
			seen += strings.Count(recs, ",") + 1
			if !strings.HasPrefix(f, "a [") {
				t.Fatalf("firing %q", f)
			}
		}
		if seen != 20 || len(got) < 4 {
			t.Fatalf("got %d firings holding %d records, want 20 records in at least 4 windows of 100ms: %q", len(got), seen, got)
		}
	})
}
