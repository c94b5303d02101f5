package store_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/store"
)

// layout is the layout of a two-task pipeline: a source, and a window
// chained with a sink.
func layout() store.Layout {
	return store.Layout{
		MaxParallelism: 128,
		Parallelism:    map[int]int{0: 2, 1: 2},
		Operators: []store.Operator{
			{Vertex: 0, ID: 0, Kind: "source", Name: "events"},
			{Vertex: 1, ID: 1, Kind: "operator", Name: "count"},
			{Vertex: 1, ID: 2, Kind: "sink", Name: "output"},
		},
		Settings:  map[string]string{"--window": "1s", "--keys": "1000"},
		Guarantee: "exactly-once",
	}
}

func taken(l store.Layout) *store.Metadata {
	m := &store.Metadata{Job: "j", ID: 17}
	m.SetLayout(l)
	return m
}

func TestACheckpointFitsTheRunThatWroteIt(t *testing.T) {
	if err := taken(layout()).Fits(layout()); err != nil {
		t.Fatal(err)
	}
	// An exactly-once checkpoint is a fine start for at-least-once.
	run := layout()
	run.Guarantee = "at-least-once"
	if err := taken(layout()).Fits(run); err != nil {
		t.Fatal(err)
	}
}

// Another parallelism fits: the state moves by key group when it is read.
func TestACheckpointFitsARunAtAnotherParallelism(t *testing.T) {
	run := layout()
	run.Parallelism = map[int]int{0: 3, 1: 1}
	if err := taken(layout()).Fits(run); err != nil {
		t.Fatal(err)
	}
}

// Operators renamed under the same uid, added, removed or chained
// differently fit: their state moves by uid when it is read, which is
// where a removed operator's state is found.
func TestACheckpointFitsARunWithOperatorsChanged(t *testing.T) {
	for name, change := range map[string]func(l *store.Layout){
		"renamed, same uid": func(l *store.Layout) { l.Operators[1].Name, l.Operators[1].UID = "sum", "count" },
		"rechained": func(l *store.Layout) {
			l.Operators[2].Vertex = 2
			l.Parallelism = map[int]int{0: 2, 1: 2, 2: 2}
		},
		"added": func(l *store.Layout) {
			l.Operators = append(l.Operators, store.Operator{Vertex: 1, ID: 3, Kind: "operator", Name: "new"})
		},
		"removed": func(l *store.Layout) { l.Operators = slices.Delete(l.Operators, 1, 2) },
	} {
		run := layout()
		run.Operators = slices.Clone(run.Operators)
		change(&run)
		if err := taken(layout()).Fits(run); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestFitsNamesEveryDifference(t *testing.T) {
	cases := []struct {
		name   string
		change func(l *store.Layout)
		says   []string
	}{
		{"max parallelism", func(l *store.Layout) { l.MaxParallelism = 64 },
			[]string{"checkpoint 17 was taken with --max-parallelism 128, this run has 64: key groups would move; restore with --max-parallelism 128"}},
		{"uid of another kind", func(l *store.Layout) {
			l.Operators = slices.Clone(l.Operators)
			l.Operators[2].UID = "count"
			l.Operators[1].UID = "counter"
		}, []string{`its operator "count" (uid "count") is a operator, this run's operator "output" with that uid is a sink; give the new operator a uid of its own (weir.UID)`}},
		{"changed setting", func(l *store.Layout) { l.Settings = map[string]string{"--window": "2s", "--keys": "1000"} },
			[]string{"checkpoint 17 was taken with --window 1s, this run has 2s; restore with --window 1s"}},
		{"added setting", func(l *store.Layout) {
			l.Settings = maps.Clone(l.Settings)
			l.Settings["--seed"] = "3"
		}, []string{"was taken without --seed, this run has --seed 3"}},
		{"removed setting", func(l *store.Layout) { l.Settings = map[string]string{"--window": "1s"} },
			[]string{"was taken with --keys 1000, this run has no --keys"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := layout()
			c.change(&run)
			err := taken(layout()).Fits(run)
			wantErr(t, err, store.ErrIncompatible, c.says...)
			var mm *store.MismatchError
			if !errors.As(err, &mm) || mm.ID != 17 || len(mm.Differences) != 1 {
				t.Fatalf("error = %#v, want one difference of checkpoint 17", err)
			}
		})
	}
}

func TestFitsListsSeveralDifferences(t *testing.T) {
	run := layout()
	run.MaxParallelism = 256
	run.Settings = map[string]string{"--window": "1s", "--keys": "10"}
	var mm *store.MismatchError
	if err := taken(layout()).Fits(run); !errors.As(err, &mm) || len(mm.Differences) != 2 {
		t.Fatalf("Fits = %v, want two differences", err)
	}
}

func TestAnAtLeastOnceCheckpointDoesNotStartAnExactlyOnceRun(t *testing.T) {
	was := layout()
	was.Guarantee = "at-least-once"
	wantErr(t, taken(was).Fits(layout()), store.ErrIncompatible, "--guarantee at-least-once, this run has exactly-once")
}

// Metadata of a weir that recorded no layout cannot be checked, so it is
// refused rather than restored into a run that may split keys otherwise.
func TestACheckpointWithoutARecordedLayoutIsRefused(t *testing.T) {
	m := &store.Metadata{Job: "j", ID: 17, Parallelism: map[int]int{0: 2, 1: 2}}
	err := m.Fits(layout())
	wantErr(t, err, store.ErrIncompatible, "older weir", "start the job over without --restore")
	if strings.Count(err.Error(), "checkpoint 17") != 1 {
		t.Fatalf("error %q: want one difference", err)
	}
}
