package weir_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
)

// The tests in this file upgrade a job through a savepoint: version A
// runs and stops with a savepoint; version B, with an operator added, one
// removed, another renamed and chained differently, and a state type
// changed, restores it.

// countFn counts the records of each key in the value state "n" and
// emits "key: count".
type countFn struct {
	n *weir.ValueState[int64, int64]
}

func (f *countFn) Open(sc *weir.StateContext[int64]) error {
	f.n = weir.NewValueState[int64](sc, "n")
	return nil
}

func (f *countFn) ProcessElement(ctx *weir.KeyedContext[int64, string], r reading) error {
	n, _ := f.n.Value()
	f.n.Update(n + 1)
	ctx.Emit(fmt.Sprintf("%d: %d", r.Key, n+1))
	return nil
}

func newCount() weir.KeyedProcessFunction[int64, reading, string] { return &countFn{} }

// upgradeOutputs are version B's outputs.
type upgradeOutputs struct {
	tallies *sink[string]
	windows *sink[weir.Windowed[int64, string]]
	added   *sink[string]
}

// upgradeA is version A: the tallies (tallyV1) with uid "tallies", a
// counter with uid "gone" that B removes, and the windows (accV1).
func upgradeA(dir string, src *cutSource) *weir.Pipeline {
	p := weir.NewPipeline(weir.WithName("upgrade"), weir.WithParallelism(src.par), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 10 * time.Millisecond, StateDir: dir}))
	in := weir.FromSource(p, "readings", src, weir.WithTimestamps(func(r reading) int64 { return r.Time }, time.Hour), weir.SourceUID("readings"))
	keyed := weir.KeyBy(in, func(r reading) int64 { return r.Key })
	fn := func() weir.KeyedProcessFunction[int64, reading, string] {
		return &tallyFn[tallyV1]{step: stepV1, show: func(t tallyV1) string { return t.Last }}
	}
	toExactlyOnce(weir.Process(keyed, fn, weir.Name("tallies"), weir.UID("tallies")), &sink[string]{})
	toExactlyOnce(weir.Process(keyed, newCount, weir.Name("counter"), weir.UID("gone")), &sink[string]{})
	w := weir.WindowBy(keyed, weir.Tumbling(100*time.Millisecond))
	toExactlyOnce(weir.AggregateWindow(w, weir.Aggregator[reading, accV1, string](aggV1{}), weir.Name("windows"), weir.UID("windows")), &sink[weir.Windowed[int64, string]]{})
	return p
}

// upgradeB is version B restored from savepoint: the tallies renamed
// (same uid) with tallyV2, a new counter (uid "added") in place of the
// removed one, and a map chained after the windows (accV2).
func upgradeB(savepoint string, src *cutSource, allowDrop bool, out upgradeOutputs) *weir.Pipeline {
	opts := []weir.Option{weir.WithName("upgrade"), weir.WithParallelism(src.par), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 10 * time.Millisecond}), weir.WithRestore(savepoint)}
	if allowDrop {
		opts = append(opts, weir.WithAllowNonRestoredState())
	}
	p := weir.NewPipeline(opts...)
	in := weir.FromSource(p, "readings-v2", src, weir.WithTimestamps(func(r reading) int64 { return r.Time }, time.Hour), weir.SourceUID("readings"))
	keyed := weir.KeyBy(in, func(r reading) int64 { return r.Key })
	w := weir.WindowBy(keyed, weir.Tumbling(100*time.Millisecond))
	windows := weir.AggregateWindow(w, weir.Aggregator[reading, accV2, string](aggV2{}), weir.Name("windows-v2"), weir.UID("windows"))
	toExactlyOnce(weir.Map(windows, func(x weir.Windowed[int64, string]) weir.Windowed[int64, string] { return x }, weir.Name("same")), out.windows)
	toExactlyOnce(weir.Process(keyed, newCount, weir.Name("new counter"), weir.UID("added")), out.added)
	fn := func() weir.KeyedProcessFunction[int64, reading, string] {
		return &tallyFn[tallyV2]{step: stepV2, show: showV2}
	}
	toExactlyOnce(weir.Process(keyed, fn, weir.Name("tallies-v2"), weir.UID("tallies")), out.tallies)
	return p
}

// stopWithSavepoint runs p until src is ready, stops it with a savepoint
// into dir (as opts say) and returns the savepoint's path.
func stopWithSavepoint(t *testing.T, p *weir.Pipeline, src *cutSource, dir string, opts ...weir.StopOption) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	select {
	case <-src.ready:
	case err := <-done:
		t.Fatalf("the job ended before its checkpoint: %v", err)
	}
	sp, err := p.StopWithSavepoint(ctx, dir, opts...)
	if err != nil {
		t.Fatalf("stop with savepoint: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the job stopped with a savepoint: Run = %v, want nil", err)
	}
	if rep := p.Report(); !rep.Stopped || !slices.Equal(rep.Savepoints, []string{sp.Path}) || p.Status().State != "stopped" {
		t.Fatalf("the job's report: stopped %v, savepoints %v, state %q; want stopped after savepoint %s", rep.Stopped, rep.Savepoints, p.Status().State, sp.Path)
	}
	if _, err := os.Stat(filepath.Join(sp.Path, "_savepoint")); err != nil {
		t.Fatalf("savepoint %s: %v", sp.Path, err)
	}
	return sp.Path
}

func TestAnUpgradedJobRestoresASavepointByOperatorUID(t *testing.T) {
	dir := t.TempDir()
	spDir := filepath.Join(dir, "savepoints")
	srcA := newCutSource(evolveFirst, 2)
	path := stopWithSavepoint(t, upgradeA(filepath.Join(dir, "state"), srcA), srcA, spDir)

	// The removed operator held state: refused unless it may go.
	out := upgradeOutputs{&sink[string]{}, &sink[weir.Windowed[int64, string]]{}, &sink[string]{}}
	p := upgradeB(path, newCutSource(evolveRecords, 2), false, out)
	err := p.Run(context.Background())
	for _, want := range []string{`operator "counter" (uid "gone")`, "--allow-non-restored-state"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("restore without the removed operator: %v, want an error saying %q", err, want)
		}
	}
	if len(out.tallies.recs)+len(out.added.recs) > 0 {
		t.Fatalf("the refused restore output %d records", len(out.tallies.recs)+len(out.added.recs))
	}

	checkUpgrade(t, path)
}

// The savepoint in testdata/savepoint-upgrade-v1 was written by version A
// with the first savepoint format; every later weir must restore it into
// version B as this one does. WEIR_REWRITE_SAVEPOINT=1 writes it anew
// (only with a format change that keeps reading the old one).
func TestASavepointOfTheFirstFormatStillRestores(t *testing.T) {
	fixture := filepath.Join("testdata", "savepoint-upgrade-v1")
	if os.Getenv("WEIR_REWRITE_SAVEPOINT") == "1" {
		dir := t.TempDir()
		srcA := newCutSource(evolveFirst, 2)
		path := stopWithSavepoint(t, upgradeA(filepath.Join(dir, "state"), srcA), srcA, dir)
		if err := os.RemoveAll(fixture); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cp", "-r", path, fixture).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v: %s", err, out)
		}
	}
	checkUpgrade(t, fixture)
}

// checkUpgrade restores savepoint path of version A into version B and
// checks B's output against the model of A's state migrated.
func checkUpgrade(t *testing.T, path string) {
	t.Helper()
	out := upgradeOutputs{&sink[string]{}, &sink[weir.Windowed[int64, string]]{}, &sink[string]{}}
	src := newCutSource(evolveRecords, 2)
	p := upgradeB(path, src, true, out)
	run(t, p)
	if p.Report().Restored == 0 || src.from[0]+src.from[1] <= 1 {
		t.Fatalf("version B restored checkpoint %d from positions %v: nothing", p.Report().Restored, src.from)
	}
	wantTallies, wantWindows := migratedModel(src.from, 2)
	var wantAdded []string
	counts := map[int64]int{}
	for i := range int64(evolveRecords) {
		if r := readingAt(i); i >= src.from[int(i%2)] {
			counts[r.Key]++
			wantAdded = append(wantAdded, fmt.Sprintf("%d: %d", r.Key, counts[r.Key]))
		}
	}
	slices.Sort(wantAdded)
	var gotWindows []string
	for _, w := range out.windows.recs {
		gotWindows = append(gotWindows, fmt.Sprintf("%d [%d,%d) %s", w.Key, w.Window.Start, w.Window.End, w.Value))
	}
	slices.Sort(gotWindows)
	for _, c := range []struct {
		name      string
		got, want []string
	}{
		{"tallies (migrated state, same uid)", out.tallies.sorted(func(a, b string) bool { return a < b }), wantTallies},
		{"windows (rechained, migrated state)", gotWindows, wantWindows},
		{"added counter (starts empty)", out.added.sorted(func(a, b string) bool { return a < b }), wantAdded},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s after the upgrade:\ngot  %q\nwant %q", c.name, c.got, c.want)
		}
	}
}
