package weirtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// This file is a job whose output depends on which records are late: a
// source of one subtask emits events out of order into session windows
// with an allowed lateness and a late-data side output. Its watermarks
// come at fixed places in its output (one record per read, a watermark
// after every read), so a failure-free run decides lateness the same way
// every time; a run with failures must decide it the same way too, which
// holds only if the watermarks are restored with the state.

// oneByOne reads its source one record at a time, so that the source
// subtask's watermarks follow records at the same places however the
// run is cut by failures. It replays deterministically only if det says
// so: otherwise fine-grained failover restarts its consumers with it.
type oneByOne[T any] struct {
	connector.Source[T]
	det bool
}

func (o oneByOne[T]) Deterministic() bool { return o.det }

func (o oneByOne[T]) Open(ctx context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[T], error) {
	r, err := o.Source.Open(ctx, info, pos)
	if err != nil {
		return nil, err
	}
	return oneByOneReader[T]{r}, nil
}

type oneByOneReader[T any] struct{ connector.Reader[T] }

func (r oneByOneReader[T]) Read(ctx context.Context, buf []T) (int, error) {
	return r.Reader.Read(ctx, buf[:1])
}

// lateResult is a session's count or, with Late set, a record too late
// for every window (Start is then its event time).
type lateResult struct {
	Late       bool
	Key        int64
	Start, End int64
	N          int64
}

// lateEvents are n events, mostly in order (event i at time i); about one
// in eight comes 100ms behind, too late for its session even with the
// allowed lateness, and about one in eight 10ms behind, late but within
// it (its session fires again).
func lateEvents(n int64) func(i int64) event {
	return func(i int64) event {
		e := event{Key: int64(generator.Mix(7, uint64(i)) % 40), Time: i + 200}
		switch generator.Mix(8, uint64(i)) % 8 {
		case 0:
			e.Time -= 100
		case 1:
			e.Time -= 10
		}
		return e
	}
}

// lateJob counts events per key in 5ms sessions, allowing 20ms of
// lateness, and writes the sessions and the late events.
func lateJob(p *weir.Pipeline, sink connector.Sink[lateResult]) { lateJobOf(true)(p, sink) }

// lateJobOf is lateJob, whose source replays deterministically if det.
func lateJobOf(det bool) weirtest.Job[lateResult] {
	return func(p *weir.Pipeline, sink connector.Sink[lateResult]) { lateJobWith(p, sink, det) }
}

func lateJobWith(p *weir.Pipeline, sink connector.Sink[lateResult], det bool) {
	src := oneByOne[event]{generator.New(6_000, lateEvents(6_000), generator.WithRate(20_000)), det}
	in := weir.FromSource(p, "events", connector.Source[event](src),
		weir.WithTimestamps(func(e event) int64 { return e.Time }, 0), weir.SourceParallelism(1))
	late := weir.NewOutputTag[event]("late")
	w := weir.WindowBy(weir.KeyBy(in, func(e event) int64 { return e.Key }), weir.Session(5*time.Millisecond)).
		AllowedLateness(20 * time.Millisecond).LateTo(late)
	sessions := weir.Map(weir.AggregateWindow(w, countAgg{}), func(r windowCount) lateResult {
		return lateResult{Key: r.Key, Start: r.Window.Start, End: r.Window.End, N: r.Value}
	})
	lates := weir.Map(weir.SideOutput(late), func(e event) lateResult { return lateResult{Late: true, Key: e.Key, Start: e.Time} })
	weir.To(weir.Union(sessions, lates), "sink", sink)
}

// lateOptions make the source emit a watermark after every read.
var lateOptions = []weir.Option{weir.WithWatermarkInterval(time.Nanosecond)}

// The job's failure-free output is the same run to run, and holds late
// records of both kinds: the ground the oracle below stands on.
func TestLateDataJobIsDeterministicWithoutFailures(t *testing.T) {
	var outs [2][]lateResult
	for i := range outs {
		sink := weirtest.NewSink[lateResult]()
		p := weir.NewPipeline(append([]weir.Option{weir.WithParallelism(2)}, lateOptions...)...)
		lateJob(p, sink)
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		outs[i] = sink.Values()
	}
	if err := weirtest.Equal(outs[0], written(outs[1])); err != nil {
		t.Fatalf("two failure-free runs: %v", err)
	}
	var late, refired int
	fired := map[lateResult]bool{}
	for _, r := range outs[0] {
		if r.Late {
			late++
			continue
		}
		k := lateResult{Key: r.Key, Start: r.Start}
		if fired[k] {
			refired++
		}
		fired[k] = true
	}
	if late == 0 || refired == 0 {
		t.Fatalf("the job shows no lateness: %d late records, %d sessions fired again", late, refired)
	}
}

func written[T comparable](vs []T) []weirtest.Written[T] {
	out := make([]weirtest.Written[T], len(vs))
	for i, v := range vs {
		out[i] = weirtest.Written[T]{Value: v}
	}
	return out
}

// Under failures, restored from checkpoints with global or fine-grained
// failover, the job sends the same records to the late-data side output
// and fires the same sessions as without failures: exactly-once covers
// what is late. Under fine-grained failover the deterministic source
// restarts alone (its consumers run on); the other one restarts with its
// consumers. Checkpoints are aligned: the watermarks among the records an
// unaligned barrier overtook are not stored, so after a restore from an
// unaligned checkpoint those records may be decided against an older
// watermark (see docs/fault-tolerance.md).
func TestOracleLateDataAcrossRestores(t *testing.T) {
	for _, c := range []struct {
		name string
		f    weir.Failover
		det  bool
	}{
		{"global", weir.GlobalFailover, true},
		{"fine-grained", weir.FineGrainedFailover, true},
		{"fine-grained-regions", weir.FineGrainedFailover, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := weirtest.Check(t, lateJobOf(c.det), weirtest.Options[lateResult]{
				Guarantee: weir.ExactlyOnce, Seeds: seeds(schedulesPerJob),
				Options: append([]weir.Option{weir.WithFailover(c.f)}, lateOptions...),
			})
			report(t, res)
		})
	}
}

// The late-data job crashed at a moment each seed chooses (its process
// state lost, as by SIGKILL) and restored from its latest checkpoint in
// the state directory, at parallelism 1, 3 or 8, decides lateness as the
// failure-free run does: the same records late, the same sessions fired.
func TestOracleLateDataAcrossCrashRestores(t *testing.T) {
	s := seeds(20)
	res := weirtest.CheckCrashRestores(t, lateJobOf(true), weirtest.Options[lateResult]{Seeds: s, Options: lateOptions}, []int{1, 3, 8})
	if res.Stopped != len(s) || res.Injected == 0 {
		t.Fatalf("%d of %d runs crashed, %d failures injected: the oracle proved nothing", res.Stopped, len(s), res.Injected)
	}
	report(t, res)
}
