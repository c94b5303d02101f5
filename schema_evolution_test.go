package weir_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/connector"
)

// The tests in this file restore a checkpoint of one version of a job
// into a version whose state types changed: state schema evolution.

const (
	evolveRecords = 400 // records of the whole input
	evolveFirst   = 240 // records version A reads before it is stopped
	evolveKeys    = 6
)

// reading is the job's input: record i has key i mod 6, value i mod 7 + 1
// and event time i ms.
type reading struct{ Key, Value, Time int64 }

func readingAt(i int64) reading { return reading{Key: i % evolveKeys, Value: i%7 + 1, Time: i} }

// cutSource emits the readings below limit, strided over its subtasks,
// from the position it is opened at; then it ends if limit is the whole
// input, or idles. It closes ready once every subtask's position was
// taken twice at its limit: a checkpoint after the limit was triggered
// after an earlier one had finished. It records the positions opened at.
type cutSource struct {
	limit int64
	par   int
	mu    sync.Mutex
	atCut map[int]int   // per subtask: positions taken at the limit
	from  map[int]int64 // per subtask: the position opened at
	ready chan struct{}
}

func newCutSource(limit int64, par int) *cutSource {
	return &cutSource{limit: limit, par: par, atCut: map[int]int{}, from: map[int]int64{}, ready: make(chan struct{})}
}

func (s *cutSource) Open(_ context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[reading], error) {
	next := int64(info.Subtask)
	if pos != nil {
		var err error
		if next, err = strconv.ParseInt(string(pos), 10, 64); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	s.from[info.Subtask] = next
	s.mu.Unlock()
	return &cutReader{s: s, sub: info.Subtask, next: next, step: int64(info.Parallelism)}, nil
}

type cutReader struct {
	s          *cutSource
	sub        int
	next, step int64
}

func (r *cutReader) Read(ctx context.Context, buf []reading) (int, error) {
	n := 0
	for n < len(buf) && r.next < r.s.limit {
		buf[n] = readingAt(r.next)
		r.next += r.step
		n++
	}
	if n > 0 {
		return n, nil
	}
	if r.s.limit >= evolveRecords {
		return 0, errEOF
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(5 * time.Millisecond): // nothing more until stopped
		return 0, nil
	}
}

func (r *cutReader) Position() connector.Position {
	if r.next >= r.s.limit {
		r.s.mu.Lock()
		r.s.atCut[r.sub]++
		done := len(r.s.atCut) == r.s.par
		for _, c := range r.s.atCut {
			done = done && c >= 2
		}
		if done {
			select {
			case <-r.s.ready:
			default:
				close(r.s.ready)
			}
		}
		r.s.mu.Unlock()
	}
	return connector.Position(strconv.FormatInt(r.next, 10))
}

func (r *cutReader) Close() error { return nil }

// Version A of the job's state.
type tallyV1 struct {
	Count int32
	Sum   int32
	Last  string
}

type accV1 struct {
	N     int16
	Total float32
	Tag   string
}

// Version B: fields reordered, widened, one removed (Last, Tag) and one
// added (Max with a declared default, Min without).
type tallyV2 struct {
	Sum   int64
	Count int64
	Max   int64 `codec:"default=-1"`
}

type accV2 struct {
	Total float64
	Min   int64
	N     int32
}

// An incompatible version: Count changed from int32 to string.
type tallyBad struct {
	Count string
	Sum   int32
}

// tallyFn keeps a T per key in the value state "tally", updated by step,
// and emits "key: " and what show says of it.
type tallyFn[T any] struct {
	state *weir.ValueState[T, int64]
	step  func(T, reading) T
	show  func(T) string
	opts  []weir.StateOption
}

func (f *tallyFn[T]) Open(sc *weir.StateContext[int64]) error {
	f.state = weir.NewValueState[T](sc, "tally", f.opts...)
	return nil
}

func (f *tallyFn[T]) ProcessElement(ctx *weir.KeyedContext[int64, string], r reading) error {
	t, _ := f.state.Value()
	t = f.step(t, r)
	f.state.Update(t)
	ctx.Emit(fmt.Sprintf("%d: %s", r.Key, f.show(t)))
	return nil
}

func stepV1(t tallyV1, r reading) tallyV1 {
	return tallyV1{Count: t.Count + 1, Sum: t.Sum + int32(r.Value), Last: fmt.Sprint(r.Value)}
}

func stepV2(t tallyV2, r reading) tallyV2 {
	return tallyV2{Count: t.Count + 1, Sum: t.Sum + r.Value, Max: max(t.Max, r.Value)}
}

func showV2(t tallyV2) string { return fmt.Sprintf("count %d sum %d max %d", t.Count, t.Sum, t.Max) }

// aggV1 counts a window's readings and sums their values.
type aggV1 struct{}

func (aggV1) Create() accV1 { return accV1{} }
func (aggV1) Add(a accV1, r reading) accV1 {
	return accV1{N: a.N + 1, Total: a.Total + float32(r.Value), Tag: "a"}
}
func (aggV1) Merge(a, b accV1) accV1 { return accV1{N: a.N + b.N, Total: a.Total + b.Total} }
func (aggV1) Result(a accV1) string  { return fmt.Sprint(a.N) }

// aggV2 also keeps the smallest value.
type aggV2 struct{}

func (aggV2) Create() accV2                { return accV2{} }
func (aggV2) Add(a accV2, r reading) accV2 { return addV2(a, r) }
func (aggV2) Merge(a, b accV2) accV2 {
	return accV2{N: a.N + b.N, Total: a.Total + b.Total, Min: min(a.Min, b.Min)}
}
func (aggV2) Result(a accV2) string { return fmt.Sprintf("n %d total %g min %d", a.N, a.Total, a.Min) }

func addV2(a accV2, r reading) accV2 {
	if a.N == 0 || r.Value < a.Min {
		a.Min = r.Value
	}
	a.N++
	a.Total += float64(r.Value)
	return a
}

// evolvingJob builds a version of the job: per key, the value state of
// fn, and a count per key and 100ms window with agg. Watermarks lag an
// hour behind, so no window fires before the input ends.
func evolvingJob[T, Acc any](dir string, src *cutSource, fn func() *tallyFn[T], agg weir.Aggregator[reading, Acc, string],
	restore bool, tallies *sink[string], windows *sink[weir.Windowed[int64, string]]) *weir.Pipeline {
	opts := []weir.Option{weir.WithName("evolve"), weir.WithParallelism(src.par), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 10 * time.Millisecond, StateDir: dir})}
	if restore {
		opts = append(opts, weir.WithRestore("latest"))
	}
	p := weir.NewPipeline(opts...)
	in := weir.FromSource(p, "readings", src, weir.WithTimestamps(func(r reading) int64 { return r.Time }, time.Hour))
	keyed := weir.KeyBy(in, func(r reading) int64 { return r.Key })
	toExactlyOnce(weir.Process(keyed, func() weir.KeyedProcessFunction[int64, reading, string] { return fn() }, weir.Name("tallies")), tallies)
	w := weir.WindowBy(keyed, weir.Tumbling(100*time.Millisecond))
	toExactlyOnce(weir.AggregateWindow(w, agg, weir.Name("windows")), windows)
	return p
}

// runVersionA runs version A, its tallies' state created with opts,
// until a checkpoint holds its first evolveFirst records and stops it
// there, leaving the checkpoint in dir.
func runVersionA(t *testing.T, dir string, opts ...weir.StateOption) {
	t.Helper()
	src := newCutSource(evolveFirst, 2)
	p := evolvingJob(dir, src, func() *tallyFn[tallyV1] {
		return &tallyFn[tallyV1]{step: stepV1, show: func(t tallyV1) string { return t.Last }, opts: opts}
	}, weir.Aggregator[reading, accV1, string](aggV1{}), false, &sink[string]{}, &sink[weir.Windowed[int64, string]]{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	select {
	case <-src.ready:
	case err := <-done:
		cancel()
		t.Fatalf("version A ended before its checkpoint: %v", err)
	}
	cancel()
	<-done
}

// migratedModel computes what version B outputs when restored from a
// checkpoint holding, per subtask i, the records below from[i]: version
// A's state of those records, migrated, then B's steps for the rest.
func migratedModel(from map[int]int64, par int) (tallies, windows []string) {
	before := func(i int64) bool { return i < from[int(i%int64(par))] }
	ta := map[int64]tallyV1{}
	type kw struct{ key, start int64 }
	wa := map[kw]accV1{}
	for i := range int64(evolveRecords) {
		if r := readingAt(i); before(i) {
			ta[r.Key] = stepV1(ta[r.Key], r)
			w := kw{r.Key, r.Time - r.Time%100}
			wa[w] = aggV1{}.Add(wa[w], r)
		}
	}
	tb := map[int64]tallyV2{}
	for k, v := range ta {
		tb[k] = tallyV2{Count: int64(v.Count), Sum: int64(v.Sum), Max: -1}
	}
	wb := map[kw]accV2{}
	for w, a := range wa {
		wb[w] = accV2{N: int32(a.N), Total: float64(a.Total)}
	}
	for i := range int64(evolveRecords) {
		if r := readingAt(i); !before(i) {
			tb[r.Key] = stepV2(tb[r.Key], r)
			tallies = append(tallies, fmt.Sprintf("%d: %s", r.Key, showV2(tb[r.Key])))
			w := kw{r.Key, r.Time - r.Time%100}
			wb[w] = addV2(wb[w], r)
		}
	}
	for w, a := range wb {
		windows = append(windows, fmt.Sprintf("%d [%d,%d) %s", w.key, w.start, w.start+100, aggV2{}.Result(a)))
	}
	slices.Sort(tallies)
	slices.Sort(windows)
	return tallies, windows
}

func TestARestoreIntoChangedStateTypesMigratesTheState(t *testing.T) {
	dir := t.TempDir()
	runVersionA(t, dir)

	// An incompatible change is refused before the job processes
	// anything, and not retried: a restart would meet it again.
	bad := newCutSource(evolveRecords, 2)
	badTallies := &sink[string]{}
	p := evolvingJob(dir, bad, func() *tallyFn[tallyBad] {
		return &tallyFn[tallyBad]{step: func(t tallyBad, _ reading) tallyBad { return t }, show: func(tallyBad) string { return "" }}
	}, weir.Aggregator[reading, accV2, string](aggV2{}), true, badTallies, &sink[weir.Windowed[int64, string]]{})
	err := p.Run(context.Background())
	if err == nil {
		t.Fatal("a restore into a state type changed incompatibly ran")
	}
	for _, want := range []string{`"tallies"`, `state "tally"`, "field tallyBad.Count changed from int32 to string"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q:\n%v", want, err)
		}
	}
	if !errors.Is(err, codec.ErrIncompatible) {
		t.Errorf("the refusal does not wrap codec.ErrIncompatible: %v", err)
	}
	if rec := p.Report().Recoveries; len(rec) > 0 {
		t.Errorf("the refused version was restarted: %+v", rec)
	}
	if len(badTallies.recs) > 0 {
		t.Errorf("the refused version output %d records", len(badTallies.recs))
	}

	// Version B restores the same checkpoint, converting its state.
	checkVersionB(t, dir)
}

// checkVersionB runs version B, its tallies' state created with opts,
// restoring version A's checkpoint in dir, and compares its output with
// the model's.
func checkVersionB(t *testing.T, dir string, opts ...weir.StateOption) {
	t.Helper()
	src := newCutSource(evolveRecords, 2)
	tallies, windows := &sink[string]{}, &sink[weir.Windowed[int64, string]]{}
	p := evolvingJob(dir, src, func() *tallyFn[tallyV2] { return &tallyFn[tallyV2]{step: stepV2, show: showV2, opts: opts} },
		weir.Aggregator[reading, accV2, string](aggV2{}), true, tallies, windows)
	run(t, p)
	if src.from[0]+src.from[1] <= 1 {
		t.Fatalf("version B started from positions %v: the checkpoint held no state", src.from)
	}
	wantTallies, wantWindows := migratedModel(src.from, 2)
	gotTallies := tallies.sorted(func(a, b string) bool { return a < b })
	var gotWindows []string
	for _, w := range windows.recs {
		gotWindows = append(gotWindows, fmt.Sprintf("%d [%d,%d) %s", w.Key, w.Window.Start, w.Window.End, w.Value))
	}
	slices.Sort(gotWindows)
	if !slices.Equal(gotTallies, wantTallies) {
		t.Errorf("tallies after the restore:\ngot  %q\nwant %q", gotTallies, wantTallies)
	}
	if !slices.Equal(gotWindows, wantWindows) {
		t.Errorf("windows after the restore:\ngot  %q\nwant %q", gotWindows, wantWindows)
	}
}
