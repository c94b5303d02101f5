package weir_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weir-stream/weir"
)

// The tests in this file stop a job of event-time windows with a
// savepoint, drained (weir stop --drain) or not. Its watermarks lag an
// hour behind event times of milliseconds, so no window fires while it
// runs: only the final watermark fires them.

// windowJob is the job: per key, the sum of the readings' values in
// tumbling windows of 100 ms, into out; restored from savepoint unless
// it is empty.
func windowJob(state, savepoint string, src *cutSource, out *sink[weir.Windowed[int64, reading]]) *weir.Pipeline {
	opts := []weir.Option{weir.WithName("drain"), weir.WithParallelism(src.par), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 10 * time.Millisecond, StateDir: state})}
	if savepoint != "" {
		opts = append(opts, weir.WithRestore(savepoint))
	}
	p := weir.NewPipeline(opts...)
	in := weir.FromSource(p, "readings", src, weir.WithTimestamps(func(r reading) int64 { return r.Time }, time.Hour))
	w := weir.WindowBy(weir.KeyBy(in, func(r reading) int64 { return r.Key }), weir.Tumbling(100*time.Millisecond))
	sum := func(a, b reading) reading {
		return reading{Key: a.Key, Value: a.Value + b.Value, Time: max(a.Time, b.Time)}
	}
	toExactlyOnce(weir.ReduceWindow(w, sum, weir.Name("sums")), out)
	return p
}

// drainedSums is the job's output as "key [start,end) sum", sorted.
func drainedSums(out *sink[weir.Windowed[int64, reading]]) []string {
	out.mu.Lock()
	defer out.mu.Unlock()
	var got []string
	for _, w := range out.recs {
		got = append(got, fmt.Sprintf("%d [%d,%d) %d", w.Key, w.Window.Start, w.Window.End, w.Value.Value))
	}
	slices.Sort(got)
	return got
}

// windowModel is what the job outputs for readings 0 to n-1 once every
// window fired.
func windowModel(n int64) []string {
	type kw struct{ key, start int64 }
	sums := map[kw]int64{}
	for i := range n {
		r := readingAt(i)
		sums[kw{r.Key, r.Time - r.Time%100}] += r.Value
	}
	var want []string
	for w, s := range sums {
		want = append(want, fmt.Sprintf("%d [%d,%d) %d", w.key, w.start, w.start+100, s))
	}
	slices.Sort(want)
	return want
}

func TestAStopWithDrainFiresEveryWindowIntoTheSavepoint(t *testing.T) {
	dir := t.TempDir()
	out := &sink[weir.Windowed[int64, reading]]{}
	src := newCutSource(evolveFirst, 2)
	path := stopWithSavepoint(t, windowJob(filepath.Join(dir, "state"), "", src, out), src, filepath.Join(dir, "savepoints"), weir.Drain())
	if got, want := drainedSums(out), windowModel(evolveFirst); !slices.Equal(got, want) {
		t.Fatalf("output of the drained job:\ngot  %q\nwant %q", got, want)
	}

	// Restored, the drained job takes every later record as late: the
	// windows of the records before the savepoint fired, and those after
	// it fall behind the final watermark.
	after := &sink[weir.Windowed[int64, reading]]{}
	run(t, windowJob(filepath.Join(dir, "restored"), path, newCutSource(evolveRecords, 2), after))
	if got := drainedSums(after); len(got) != 0 {
		t.Fatalf("a run restored from the drained savepoint output %q, want nothing (every record late)", got)
	}
}

func TestAStopWithoutDrainLeavesTheWindowsToTheRestoredRun(t *testing.T) {
	dir := t.TempDir()
	out := &sink[weir.Windowed[int64, reading]]{}
	src := newCutSource(evolveFirst, 2)
	path := stopWithSavepoint(t, windowJob(filepath.Join(dir, "state"), "", src, out), src, filepath.Join(dir, "savepoints"))
	if got := drainedSums(out); len(got) != 0 {
		t.Fatalf("the job stopped without drain output %q, want no window fired", got)
	}

	after := &sink[weir.Windowed[int64, reading]]{}
	run(t, windowJob(filepath.Join(dir, "restored"), path, newCutSource(evolveRecords, 2), after))
	if got, want := drainedSums(after), windowModel(evolveRecords); !slices.Equal(got, want) {
		t.Fatalf("output of the run restored from the savepoint:\ngot  %q\nwant %q", got, want)
	}
}
