package weir_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// rescalable builds a pipeline of a slow generated source, a keyed
// running count and a sink, runs it until a checkpoint committed output
// and returns it with its sink and a stop that ends the run.
func rescalable(t *testing.T, opts ...weir.Option) (*weir.Pipeline, *weirtest.Sink[int64], func()) {
	t.Helper()
	p := weir.NewPipeline(append([]weir.Option{weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{StateDir: t.TempDir()})}, opts...)...)
	src := weir.FromSource(p, "numbers", generator.New(1<<40, func(i int64) int64 { return i }, generator.WithRate(1000)))
	counts := weir.Process(weir.KeyBy(src, func(v int64) int64 { return v % 10 }), func() weir.KeyedProcessFunction[int64, int64, int64] { return &runningCountOf{} })
	sink := weirtest.NewSink[int64]()
	weir.To(counts, "sink", sink)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	select {
	case <-sink.Grew(0): // running, with a checkpoint committed
	case err := <-done:
		t.Fatalf("the job ended: %v", err)
	}
	return p, sink, sync.OnceFunc(func() { cancel(); <-done })
}

type runningCountOf struct {
	n *weir.ValueState[int64, int64]
}

func (r *runningCountOf) Open(sc *weir.StateContext[int64]) error {
	r.n = weir.NewValueState[int64](sc, "n")
	return nil
}

func (r *runningCountOf) ProcessElement(ctx *weir.KeyedContext[int64, int64], v int64) error {
	n, _ := r.n.Value()
	r.n.Update(n + 1)
	ctx.Emit(n + 1)
	return nil
}

func TestRescaleRefusesWhatItCannotDoLive(t *testing.T) {
	p, _, stop := rescalable(t)
	defer stop()
	ctx := context.Background()
	if _, err := p.Rescale(ctx, map[string]int{"nope": 3}); !errors.Is(err, weir.ErrInvalidRescale) || !strings.Contains(err.Error(), `no operator named "nope"`) {
		t.Fatalf("unknown operator: got %v", err)
	}
	if _, err := p.Rescale(ctx, map[string]int{"numbers": 3}); !errors.Is(err, weir.ErrNotLive) {
		t.Fatalf("a source: got %v, want ErrNotLive", err)
	}
	if _, err := p.Rescale(ctx, map[string]int{"sink": 500}); !errors.Is(err, weir.ErrInvalidRescale) || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("parallelism 500: got %v", err)
	}
	r, err := p.Rescale(ctx, map[string]int{"sink": 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Checkpoint == 0 || r.Replaced != 3 {
		t.Fatalf("rescale %+v: want a checkpoint and 3 subtasks replaced", r)
	}
	stop()
	rs := p.Report().Rescales
	if len(rs) != 1 || !rs[0].Live || rs[0].From != 2 || rs[0].To != 3 || rs[0].Checkpoint != r.Checkpoint {
		t.Fatalf("report's rescales %+v, want one live from 2 to 3", rs)
	}
}

func TestRescaleIsNotLiveUnderFineGrainedFailover(t *testing.T) {
	p, _, stop := rescalable(t, weir.WithFailover(weir.FineGrainedFailover))
	defer stop()
	if _, err := p.Rescale(context.Background(), map[string]int{"sink": 3}); !errors.Is(err, weir.ErrNotLive) {
		t.Fatalf("got %v, want ErrNotLive", err)
	}
}

// After a live rescale of the count from 2 to 3, Metrics shows the
// count's task at parallelism 3 with the subtasks that run it now, each
// counting records; the source, which ran on, keeps its counters.
func TestMetricsAfterALiveRescaleShowTheNewSubtasks(t *testing.T) {
	p, sink, stop := rescalable(t)
	defer stop()
	if m := taskOf(t, p, "process"); m.Parallelism != 2 || len(m.Subtasks) != 2 {
		t.Fatalf("before the rescale: %+v, want 2 subtasks", m)
	}
	if _, err := p.Rescale(context.Background(), map[string]int{"process": 3}); err != nil {
		t.Fatal(err)
	}
	// The old subtasks processed no more than the source had sent by now.
	sent := taskOf(t, p, "numbers").RecordsOut
	before := taskOf(t, p, "process").RecordsIn
	// Each committed record is one input of the count, processed by an
	// old subtask or a new one: more than sent+before committed means
	// the new ones processed more than before.
	for len(sink.Visible()) <= int(sent+before) {
		<-sink.Grew(int(sent + before)) // the next commit, or more than that visible
	}
	m := taskOf(t, p, "process")
	if m.Parallelism != 3 || len(m.Subtasks) != 3 {
		t.Fatalf("after the rescale to 3: parallelism %d, %d subtasks", m.Parallelism, len(m.Subtasks))
	}
	if m.RecordsIn <= before {
		t.Fatalf("the new subtasks' records in went from %d to %d", before, m.RecordsIn)
	}
	for i, s := range m.Subtasks {
		if s.RecordsIn == 0 || s.RecordsOut == 0 && s.RecordsWritten == 0 {
			t.Fatalf("subtask %d of 3 counts nothing: %+v", i, s)
		}
	}
	if src := taskOf(t, p, "numbers"); src.Parallelism != 2 || src.RecordsOut < sent {
		t.Fatalf("the source after the rescale: %+v, want parallelism 2 and at least %d records out", src, sent)
	}
}

// taskOf returns the metrics of p's task whose name contains name.
func taskOf(t *testing.T, p *weir.Pipeline, name string) weir.TaskMetrics {
	t.Helper()
	for _, m := range p.Metrics() {
		if strings.Contains(m.Name, name) {
			return m
		}
	}
	t.Fatalf("no task named %q in %+v", name, p.Metrics())
	return weir.TaskMetrics{}
}

// A task with a forward edge cannot change parallelism alone: the
// rescale is refused as not live, and the job runs on.
func TestRescaleOfATaskWithAForwardEdgeIsNotLive(t *testing.T) {
	p, sink, stop := rescalable(t, weir.WithChaining(false))
	defer stop()
	_, err := p.Rescale(context.Background(), map[string]int{"sink": 3})
	if !errors.Is(err, weir.ErrNotLive) || !strings.Contains(err.Error(), "forward edge") {
		t.Fatalf("got %v, want ErrNotLive naming the forward edge", err)
	}
	<-sink.Grew(len(sink.Visible())) // runs on
}
