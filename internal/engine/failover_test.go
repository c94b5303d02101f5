package engine

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// twoRegions is a plan of two pipelined regions: sources 0/0 and 0/1
// hash their records to sinks 1/0 and 1/1, and source 2/0 forwards
// its records to sink 3/0.
func twoRegions() *plan.Plan {
	p := &plan.Plan{MaxParallelism: 128}
	vertex := func(kind plan.Kind, parallelism int) *plan.Vertex {
		id := len(p.Vertices)
		v := &plan.Vertex{ID: id, Chain: []*plan.Node{{ID: id, Name: kind.String(), Kind: kind, Ports: 1}}, Parallelism: parallelism}
		p.Vertices = append(p.Vertices, v)
		p.VertexOf = append(p.VertexOf, v)
		return v
	}
	connect := func(from, to *plan.Vertex, how plan.Partitioning) {
		e := &plan.Edge{From: from.Head(), To: to.Head(), Partitioning: how}
		to.Head().Inputs = append(to.Head().Inputs, e)
		pe := &plan.PhysicalEdge{Edge: e, Source: from, Target: to, Partitioning: how}
		from.Outputs, to.Inputs = append(from.Outputs, pe), append(to.Inputs, pe)
	}
	connect(vertex(plan.Source, 2), vertex(plan.Sink, 2), plan.Hash)
	connect(vertex(plan.Source, 1), vertex(plan.Sink, 1), plan.Forward)
	return p
}

func sid(vertex, subtask int) dataflow.SubtaskID {
	return dataflow.SubtaskID{Vertex: vertex, Subtask: subtask}
}

func TestGlobalFailoverRestartsEverySubtaskOfTheJob(t *testing.T) {
	f := &globalFailover{plan: twoRegions()}
	want := []dataflow.SubtaskID{sid(0, 0), sid(0, 1), sid(1, 0), sid(1, 1), sid(2, 0), sid(3, 0)}
	for _, failed := range want {
		if got := f.restarts(failed); !slices.Equal(got, want) {
			t.Errorf("a failure of %v restarts %v, want %v", failed, got, want)
		}
	}
}

func TestRegionFailoverRestartsTheFailedSubtasksRegionAlone(t *testing.T) {
	p := twoRegions()
	f := newRegionFailover(p, p.Regions())
	first := []dataflow.SubtaskID{sid(0, 0), sid(0, 1), sid(1, 0), sid(1, 1)}
	second := []dataflow.SubtaskID{sid(2, 0), sid(3, 0)}
	for failed, want := range map[dataflow.SubtaskID][]dataflow.SubtaskID{
		sid(0, 1): first, sid(1, 0): first, sid(2, 0): second, sid(3, 0): second,
	} {
		if got := f.restarts(failed); !slices.Equal(got, want) {
			t.Errorf("a failure of %v restarts %v, want %v", failed, got, want)
		}
	}
}

func TestSubtaskFailoverRestartsTheFailedSubtaskAndItsDownstreamCone(t *testing.T) {
	f := newSubtaskFailover(twoRegions())
	for failed, want := range map[dataflow.SubtaskID][]dataflow.SubtaskID{
		// A source's output is not regenerated record for record: every
		// subtask it sends to restarts with it.
		sid(0, 1): {sid(0, 1), sid(1, 0), sid(1, 1)},
		sid(2, 0): {sid(2, 0), sid(3, 0)},
		// A sink sends nothing.
		sid(1, 0): {sid(1, 0)},
	} {
		if got := f.restarts(failed); !slices.Equal(got, want) {
			t.Errorf("a failure of %v restarts %v, want %v", failed, got, want)
		}
	}
}

// failingExecutor runs its part of an attempt until the test fails it
// or the attempt ends.
type failingExecutor struct {
	spec  AttemptSpec
	fail  chan error
	ended chan struct{} // closed when Run returned
}

func (x *failingExecutor) Run(ctx context.Context) error {
	defer close(x.ended)
	select {
	case err := <-x.fail:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (x *failingExecutor) Kill(dataflow.SubtaskID, error)           {}
func (x *failingExecutor) Trigger(int64, task.TriggerOptions)       {}
func (x *failingExecutor) TriggerSubtask(dataflow.SubtaskID, int64) {}
func (x *failingExecutor) Complete(int64)                           {}
func (x *failingExecutor) Abort(int64)                              {}
func (x *failingExecutor) Release()                                 {}
func (x *failingExecutor) Written() int64                           { return 0 }
func (x *failingExecutor) Positions() map[dataflow.SubtaskID][]byte { return nil }

// runs returns the subtasks of p that x runs.
func (x *failingExecutor) runs(p *plan.Plan) []dataflow.SubtaskID {
	return subtasks(p, func(v int) bool { return x.spec.Options.Local == nil || x.spec.Options.Local(sid(v, 0)) })
}

// runFailing runs the job of twoRegions by cfg on failingExecutors,
// which it hands out on the returned channel as they are deployed; the
// job ends with the test.
func runFailing(t *testing.T, cfg Config) (<-chan *failingExecutor, func() *Report) {
	deployed := make(chan *failingExecutor, 16)
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		rep *Report
		err error
	}
	ended := make(chan result, 1)
	cfg.Job, cfg.Plan, cfg.Mode, cfg.Store, cfg.Restart = "failover", twoRegions(), AtLeastOnce, store.New(blob.Memory()), &FixedDelay{Attempts: 10}
	cfg.Deploy = func(_ context.Context, spec AttemptSpec) (Executor, error) {
		x := &failingExecutor{spec: spec, fail: make(chan error, 1), ended: make(chan struct{})}
		deployed <- x
		return x, nil
	}
	go func() {
		rep, err := Run(ctx, cfg)
		ended <- result{rep, err}
	}()
	var rep *Report
	stop := func() *Report {
		if rep == nil {
			cancel()
			r := await(t, ended, "the job to end")
			if !errors.Is(r.err, context.Canceled) {
				t.Errorf("the job ended with %v, want it canceled", r.err)
			}
			rep = r.rep
		}
		return rep
	}
	t.Cleanup(func() { stop() })
	return deployed, stop
}

// Under global failover the failure of one subtask ends the attempt: the
// job restarts as a whole, every subtask in one new attempt.
func TestAFailureUnderGlobalFailoverRedeploysTheWholeJob(t *testing.T) {
	deployed, stop := runFailing(t, Config{Failover: Global})
	p := twoRegions()
	all := subtasks(p, func(int) bool { return true })
	first := await(t, deployed, "the attempt")
	first.fail <- errors.New("a subtask failed")
	second := await(t, deployed, "the restart")
	if got := second.runs(p); !slices.Equal(got, all) {
		t.Errorf("the restart runs %v, want every subtask %v", got, all)
	}
	await(t, first.ended, "the failed attempt's Run to return")
	rep := stop()
	if len(rep.Recoveries) != 1 || rep.Recoveries[0].Restarted != len(all) {
		t.Errorf("recoveries %+v, want one that restarted all %d subtasks", rep.Recoveries, len(all))
	}
}

// Under region failover on executors that cannot restart single subtasks
// the failure of a region's executor redeploys that region alone; the
// other runs on.
func TestAFailureUnderRegionFailoverRedeploysTheFailedRegionAlone(t *testing.T) {
	deployed, stop := runFailing(t, Config{Failover: FineGrained})
	p := twoRegions()
	first, second := await(t, deployed, "the first region"), await(t, deployed, "the second region")
	if got, want := first.runs(p), []dataflow.SubtaskID{sid(0, 0), sid(0, 1), sid(1, 0), sid(1, 1)}; !slices.Equal(got, want) {
		t.Fatalf("the first region runs %v, want %v", got, want)
	}
	first.fail <- errors.New("a subtask of the first region failed")
	again := await(t, deployed, "the restart of the first region")
	if got, want := again.runs(p), first.runs(p); !slices.Equal(got, want) {
		t.Errorf("the restart runs %v, want the failed region %v", got, want)
	}
	select {
	case <-second.ended:
		t.Error("the second region stopped when the first failed")
	default:
	}
	rep := stop()
	if len(rep.Recoveries) != 1 || rep.Recoveries[0].Restarted != 4 {
		t.Errorf("recoveries %+v, want one that restarted the region's 4 subtasks", rep.Recoveries)
	}
}

// Under subtask failover the failure of a subtask restarts it and its
// cone alone, on the executor that runs them all.
func TestAFailureUnderSubtaskFailoverRestartsTheFailedSubtasksConeAlone(t *testing.T) {
	x := &restartingExecutor{stopped: map[dataflow.SubtaskID]bool{}, restarting: map[dataflow.SubtaskID]bool{},
		lost: make(chan dataflow.SubtaskID, 16), restarts: make(chan restartCall, 16)}
	deployed := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Config{Job: "cone", Plan: twoRegions(), Mode: AtLeastOnce, Failover: FineGrained,
			SubtaskRestarts: true, Store: store.New(blob.Memory()), Restart: &FixedDelay{Attempts: 10},
			Deploy: func(_ context.Context, spec AttemptSpec) (Executor, error) {
				x.spec = spec
				close(deployed)
				return x, nil
			}})
		ended <- err
	}()
	await(t, deployed, "the attempt to start")
	x.fail(sid(0, 1), errors.New("a source failed"))
	call := await(t, x.restarts, "the restart")
	if want := []dataflow.SubtaskID{sid(0, 1), sid(1, 0), sid(1, 1)}; !slices.Equal(call.ids, want) {
		t.Errorf("the failure restarts %v, want %v", call.ids, want)
	}
	x.restarted(call.ids, call.ready)
	x.mu.Lock()
	for _, p := range x.problems {
		t.Error(p)
	}
	if x.stopped[sid(2, 0)] || x.stopped[sid(3, 0)] {
		t.Error("the failure stopped the subtasks of the other region")
	}
	x.mu.Unlock()
	cancel()
	if err := await(t, ended, "the job to end"); !errors.Is(err, context.Canceled) {
		t.Errorf("the job ended with %v, want it canceled", err)
	}
}

// Subtasks that failed of one cause together (a lost worker's) restart as
// one recovery, even when their restart is due at once: reported one by
// one, the failure the engine read after the restart had begun was a
// second recovery.
func TestSubtasksThatFailedTogetherRestartAsOneRecovery(t *testing.T) {
	x := &restartingExecutor{stopped: map[dataflow.SubtaskID]bool{}, restarting: map[dataflow.SubtaskID]bool{},
		lost: make(chan dataflow.SubtaskID, 16), restarts: make(chan restartCall, 16)}
	deployed := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := make(chan struct {
		rep *Report
		err error
	}, 1)
	go func() {
		rep, err := Run(ctx, Config{Job: "lost", Plan: twoRegions(), Mode: AtLeastOnce, Failover: FineGrained,
			SubtaskRestarts: true, Store: store.New(blob.Memory()), Restart: &FixedDelay{Attempts: 10},
			Deploy: func(_ context.Context, spec AttemptSpec) (Executor, error) {
				x.spec = spec
				close(deployed)
				return x, nil
			}})
		ended <- struct {
			rep *Report
			err error
		}{rep, err}
	}()
	await(t, deployed, "the attempt to start")
	h, ok := x.spec.Options.Host.(FailedTogether)
	if !ok {
		t.Fatalf("the host %T of a subtask-failover attempt cannot report failures together", x.spec.Options.Host)
	}
	x.mark(sid(0, 1))
	x.mark(sid(2, 0))
	h.FailedTogether([]dataflow.SubtaskID{sid(0, 1), sid(2, 0)}, errors.New("worker w2 lost"))
	call := await(t, x.restarts, "the restart")
	for _, id := range []dataflow.SubtaskID{sid(0, 1), sid(2, 0)} {
		if !slices.Contains(call.ids, id) {
			t.Errorf("the restart of %v leaves out %v, which failed with them", call.ids, id)
		}
	}
	x.restarted(call.ids, call.ready)
	cancel()
	r := await(t, ended, "the job to end")
	if len(r.rep.Recoveries) != 1 {
		t.Errorf("%d recoveries, want one for the subtasks that failed together: %+v", len(r.rep.Recoveries), r.rep.Recoveries)
	}
}
