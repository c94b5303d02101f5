package weir_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
)

// The tests in this file change state values in place, as a Flink
// function would, while checkpoints run every 10ms, and check that the
// job neither races with the snapshots (go test -race) nor crashes, and
// computes what a run without checkpoints computes.

// urlEvent is a visit of a URL by a key.
type urlEvent struct {
	Key  int64
	URL  string
	Time int64
}

// urlAcc is an accumulator holding a map, changed in place.
type urlAcc struct{ URLs map[string]bool }

// distinctURLs counts a key's distinct URLs, changing its accumulator in
// place.
type distinctURLs struct{}

func (distinctURLs) Create() urlAcc { return urlAcc{} }
func (distinctURLs) Add(a urlAcc, e urlEvent) urlAcc {
	if a.URLs == nil {
		a.URLs = map[string]bool{}
	}
	a.URLs[e.URL] = true
	return a
}
func (distinctURLs) Merge(a, b urlAcc) urlAcc {
	if a.URLs == nil {
		a.URLs = map[string]bool{}
	}
	for u := range b.URLs {
		a.URLs[u] = true
	}
	return a
}
func (distinctURLs) Result(a urlAcc) int { return len(a.URLs) }

const (
	mutKeys = 16
	mutURLs = 37
)

var mutURLNames = func() []string {
	out := make([]string, mutURLs)
	for i := range out {
		out[i] = fmt.Sprintf("/page/%d", i)
	}
	return out
}()

// visit is the i-th event: 16 keys, 37 URLs, 100 events per millisecond.
func visit(i int64) urlEvent {
	return urlEvent{Key: i % mutKeys, URL: mutURLNames[(i/mutKeys)%mutURLs], Time: i / 100}
}

// untilCheckpoints is a source of visits that ends once each of its
// subtasks took part in a number of checkpoints, so that records keep
// arriving while snapshots are encoded. It remembers what it emitted.
type untilCheckpoints struct {
	checkpoints int
	mu          sync.Mutex
	emitted     []urlEvent
}

func (s *untilCheckpoints) Open(_ context.Context, info connector.SubtaskInfo, _ connector.Position) (connector.Reader[urlEvent], error) {
	return &untilCheckpointsReader{s: s, next: int64(info.Subtask), step: int64(info.Parallelism)}, nil
}

// events returns the events emitted, in index order.
func (s *untilCheckpoints) events() []urlEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.emitted)
}

type untilCheckpointsReader struct {
	s          *untilCheckpoints
	next, step int64
	positions  int // checkpoints taken: the engine asks for the position at each
}

func (r *untilCheckpointsReader) Read(_ context.Context, buf []urlEvent) (int, error) {
	if r.positions >= r.s.checkpoints {
		return 0, errEOF
	}
	buf = buf[:min(len(buf), 64)]
	for i := range buf {
		buf[i] = visit(r.next)
		r.next += r.step
	}
	r.s.mu.Lock()
	r.s.emitted = append(r.s.emitted, buf...)
	r.s.mu.Unlock()
	return len(buf), nil
}

func (r *untilCheckpointsReader) Position() connector.Position {
	r.positions++
	return connector.Position(fmt.Sprint(r.next))
}

func (r *untilCheckpointsReader) Close() error { return nil }

// checkpointedVisits returns a pipeline checkpointing every 10ms and its
// source of visits, which ends after each subtask took part in ten
// checkpoints.
func checkpointedVisits(t *testing.T) (*weir.Pipeline, *untilCheckpoints, weir.Stream[urlEvent]) {
	p := weir.NewPipeline(weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 10 * time.Millisecond, StateDir: t.TempDir()}))
	src := &untilCheckpoints{checkpoints: 10}
	return p, src, weir.FromSource(p, "visits", src, weir.WithTimestamps(func(e urlEvent) int64 { return e.Time }, 0))
}

// exactlyOnceSink is a sink exactly-once jobs accept: the tests' jobs
// do not fail, so nothing is written twice.
type exactlyOnceSink[T any] struct{ *sink[T] }

func (exactlyOnceSink[T]) Idempotent() bool { return true }

func toExactlyOnce[T any](s weir.Stream[T], out *sink[T]) {
	weir.To(s, "out", exactlyOnceSink[T]{out})
}

// runCheckpointed runs p and fails t unless checkpoints completed.
func runCheckpointed(t *testing.T, p *weir.Pipeline) {
	t.Helper()
	run(t, p)
	completed := 0
	for _, c := range p.Report().Checkpoints {
		if c.Status == "completed" {
			completed++
		}
	}
	if completed == 0 {
		t.Fatal("no checkpoint completed")
	}
}

// distinctPerWindow returns "key [start,end) n" for the distinct URLs per
// key and window of size ms (tumbling) of events.
func distinctPerWindow(events []urlEvent, size int64) []string {
	type kw struct{ key, start int64 }
	sets := map[kw]map[string]bool{}
	for _, e := range events {
		w := kw{e.Key, e.Time - e.Time%size}
		if sets[w] == nil {
			sets[w] = map[string]bool{}
		}
		sets[w][e.URL] = true
	}
	var out []string
	for w, s := range sets {
		out = append(out, fmt.Sprintf("%d [%d,%d) %d", w.key, w.start, w.start+size, len(s)))
	}
	slices.Sort(out)
	return out
}

func windowedInts(s *sink[weir.Windowed[int64, int]]) []string {
	var out []string
	for _, r := range s.recs {
		out = append(out, fmt.Sprintf("%d [%d,%d) %d", r.Key, r.Window.Start, r.Window.End, r.Value))
	}
	slices.Sort(out)
	return out
}

func TestAnAccumulatorChangedInPlaceDoesNotRaceWithCheckpoints(t *testing.T) {
	p, src, visits := checkpointedVisits(t)
	w := weir.WindowBy(weir.KeyBy(visits, func(e urlEvent) int64 { return e.Key }), weir.Tumbling(100*time.Millisecond))
	out := &sink[weir.Windowed[int64, int]]{}
	toExactlyOnce(weir.AggregateWindow(w, distinctURLs{}), out)
	runCheckpointed(t, p)
	if got, want := windowedInts(out), distinctPerWindow(src.events(), 100); !slices.Equal(got, want) {
		t.Fatalf("got %d results, want %d:\ngot  %q\nwant %q", len(got), len(want), got, want)
	}
}

func TestASessionAccumulatorChangedInPlaceDoesNotRaceWithCheckpoints(t *testing.T) {
	p, src, visits := checkpointedVisits(t)
	// Every key has a visit each 0.16ms: one session per key.
	w := weir.WindowBy(weir.KeyBy(visits, func(e urlEvent) int64 { return e.Key }), weir.Session(time.Second))
	out := &sink[weir.Windowed[int64, int]]{}
	toExactlyOnce(weir.AggregateWindow(w, distinctURLs{}), out)
	runCheckpointed(t, p)
	events := src.events()
	last := map[int64]int64{}
	urls := map[int64]map[string]bool{}
	for _, e := range events {
		last[e.Key] = max(last[e.Key], e.Time)
		if urls[e.Key] == nil {
			urls[e.Key] = map[string]bool{}
		}
		urls[e.Key][e.URL] = true
	}
	var want []string
	for k, l := range last {
		want = append(want, fmt.Sprintf("%d [%d,%d) %d", k, k/100, l+1000, len(urls[k])))
	}
	slices.Sort(want)
	if got := windowedInts(out); !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestAReducedValueChangedInPlaceDoesNotRaceWithCheckpoints(t *testing.T) {
	p, src, visits := checkpointedVisits(t)
	type seen struct {
		Key  int64
		URLs map[string]bool
	}
	sets := weir.Map(visits, func(e urlEvent) seen { return seen{e.Key, map[string]bool{e.URL: true}} })
	w := weir.WindowBy(weir.KeyBy(sets, func(s seen) int64 { return s.Key }), weir.Tumbling(100*time.Millisecond))
	reduced := weir.ReduceWindow(w, func(a, b seen) seen {
		maps.Copy(a.URLs, b.URLs) // a is the window's value, changed in place
		return a
	})
	counts := weir.Map(reduced, func(r weir.Windowed[int64, seen]) weir.Windowed[int64, int] {
		return weir.Windowed[int64, int]{Key: r.Key, Window: r.Window, Value: len(r.Value.URLs)}
	})
	out := &sink[weir.Windowed[int64, int]]{}
	toExactlyOnce(counts, out)
	runCheckpointed(t, p)
	if got, want := windowedInts(out), distinctPerWindow(src.events(), 100); !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestAProcessWindowSortingItsRecordsDoesNotRaceWithCheckpoints(t *testing.T) {
	p, src, visits := checkpointedVisits(t)
	w := weir.WindowBy(weir.KeyBy(visits, func(e urlEvent) int64 { return e.Key }), weir.Tumbling(100*time.Millisecond)).
		AllowedLateness(time.Second) // the records stay in state after the window fired
	res := weir.ProcessWindow(w, func(k int64, win weir.Window, recs []urlEvent, emit func(weir.Windowed[int64, int])) error {
		slices.SortFunc(recs, func(a, b urlEvent) int { return -int(a.Time - b.Time) })
		n := 0
		for i, r := range recs {
			if i == 0 || r.URL != recs[i-1].URL {
				n++
			}
		}
		emit(weir.Windowed[int64, int]{Key: k, Window: win, Value: n})
		return nil
	})
	out := &sink[weir.Windowed[int64, int]]{}
	toExactlyOnce(res, out)
	runCheckpointed(t, p)
	// Sorted by time, the URLs of a window's records change at every
	// record (a key's consecutive visits have different URLs).
	want := map[string]int{}
	for _, e := range src.events() {
		start := e.Time - e.Time%100
		want[fmt.Sprintf("%d [%d,%d)", e.Key, start, start+100)]++
	}
	for _, r := range out.recs {
		k := fmt.Sprintf("%d [%d,%d)", r.Key, r.Window.Start, r.Window.End)
		if r.Value != want[k] {
			t.Fatalf("%s: got %d, want %d", k, r.Value, want[k])
		}
		delete(want, k)
	}
	if len(want) > 0 {
		t.Fatalf("windows without results: %v", want)
	}
}

// urlSets keeps each key's URLs in a map held by value state, list state
// and map state, and changes the maps in place.
type urlSets struct {
	value *weir.ValueState[urlAcc, int64]
	list  *weir.ListState[map[string]bool, int64]
	byURL *weir.MapState[string, map[int64]bool, int64]
	agg   *weir.AggregatingState[urlEvent, urlAcc, int, int64]
}

func (f *urlSets) Open(sc *weir.StateContext[int64]) error {
	f.value = weir.NewValueState[urlAcc](sc, "urls")
	f.list = weir.NewListState[map[string]bool](sc, "url-list")
	f.byURL = weir.NewMapState[string, map[int64]bool](sc, "by-url")
	f.agg = weir.NewAggregatingState(sc, "agg", weir.Aggregator[urlEvent, urlAcc, int](distinctURLs{}))
	return nil
}

func (f *urlSets) ProcessElement(ctx *weir.KeyedContext[int64, string], e urlEvent) error {
	v, _ := f.value.Value()
	if v.URLs == nil {
		v.URLs = map[string]bool{}
		f.value.Update(v)
	}
	v.URLs[e.URL] = true // in place, as a Flink function would

	if l := f.list.Get(); len(l) == 0 {
		f.list.Add(map[string]bool{e.URL: true})
	} else {
		l[0][e.URL] = true
	}

	if m, ok := f.byURL.Get(e.URL); ok {
		m[e.Time] = true
	} else {
		f.byURL.Put(e.URL, map[int64]bool{e.Time: true})
	}

	f.agg.Add(e)
	n, _ := f.agg.Get()
	ctx.Emit(fmt.Sprintf("%d %d %d %d", e.Key, len(v.URLs), len(f.list.Get()[0]), n))
	return nil
}

func TestValueStateChangedInPlaceDoesNotRaceWithCheckpoints(t *testing.T) {
	p, src, visits := checkpointedVisits(t)
	out := &sink[string]{}
	res := weir.Process(weir.KeyBy(visits, func(e urlEvent) int64 { return e.Key }), func() weir.KeyedProcessFunction[int64, urlEvent, string] {
		return &urlSets{}
	})
	toExactlyOnce(res, out)
	runCheckpointed(t, p)
	// Each key's records arrive in order: the last result per key counts
	// all its URLs.
	urls := map[int64]map[string]bool{}
	for _, e := range src.events() {
		if urls[e.Key] == nil {
			urls[e.Key] = map[string]bool{}
		}
		urls[e.Key][e.URL] = true
	}
	got := map[int64]string{}
	for _, r := range out.recs {
		var k int64
		fmt.Sscan(r, &k)
		got[k] = r
	}
	for k, s := range urls {
		n := len(s)
		if want := fmt.Sprintf("%d %d %d %d", k, n, n, n); got[k] != want {
			t.Errorf("key %d: got %q, want %q", k, got[k], want)
		}
	}
}

// tagged is a record holding a map, which the join function changes.
type tagged struct {
	Key  int64
	Time int64
	Seen map[string]bool
}

func TestAJoinFunctionChangingBufferedRecordsDoesNotRaceWithCheckpoints(t *testing.T) {
	p, src, visits := checkpointedVisits(t)
	left := weir.Map(visits, func(e urlEvent) tagged { return tagged{e.Key, e.Time, map[string]bool{e.URL: true}} })
	byKey := func(e urlEvent) int64 { return e.Key }
	joined := weir.IntervalJoin(weir.KeyBy(left, func(v tagged) int64 { return v.Key }), weir.KeyBy(visits, byKey), 0, 0,
		func(a tagged, b urlEvent) int64 {
			a.Seen[b.URL] = true // a is buffered in the join's state
			return a.Key
		})
	out := &sink[int64]{}
	toExactlyOnce(joined, out)
	runCheckpointed(t, p)
	// Both sides carry the same events: each pair of a key's events in
	// the same millisecond joins.
	type kt struct{ key, time int64 }
	n := map[kt]int{}
	for _, e := range src.events() {
		n[kt{e.Key, e.Time}]++
	}
	want := 0
	for _, c := range n {
		want += c * c
	}
	if len(out.recs) != want {
		t.Fatalf("got %d joined pairs, want %d", len(out.recs), want)
	}
}
