package cluster_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli/jobs"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
)

// openedBySubtask counts the times each subtask's reader is opened. It
// regenerates its records exactly after a rewind only if deterministic
// says so (connector.Deterministic).
type openedBySubtask struct {
	connector.Source[jobs.KeyEvent]
	opens         []atomic.Int32
	deterministic bool
}

func (c *openedBySubtask) Deterministic() bool { return c.deterministic }

func (c *openedBySubtask) Open(ctx context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[jobs.KeyEvent], error) {
	c.opens[info.Subtask].Add(1)
	return c.Source.Open(ctx, info, pos)
}

// keyedWindows runs one keyed window count at parallelism 2 with
// fine-grained failover; args[0] is the output directory. Every keyed
// channel connects the subtasks, so the job is one pipelined region.
type keyedWindows struct {
	store string
	src   *openedBySubtask
	logs  *logLines
	// unchained runs every operator as a task of its own: the window
	// task then merges two input channels and has outputs.
	unchained bool
	// inject kills this many subtasks at random moments (seed chooses),
	// in the cluster run only.
	inject int
	seed   uint64
	// standby runs active standbys.
	standby bool
	// timeout aborts checkpoints unfinished after it (0: the default);
	// stall is the stall timeout (0: the default), onStall what is told
	// a stall's report.
	timeout, stall time.Duration
	onStall        func(report string)
}

func (keyedWindows) Jobs() []string { return []string{"windows"} }

func (k keyedWindows) Open(_ context.Context, _, name string, args []string) (cluster.Pipeline, error) {
	ck := weir.CheckpointConfig{Interval: 100 * time.Millisecond, StateDir: k.store, Log: true, Timeout: k.timeout}
	if k.timeout > 0 {
		// A scenario that sets a timeout has checkpoints that cannot
		// complete (a blocked source): one timing out on a loaded machine
		// before the scenario's own failure must not fail the job.
		ck.TolerableFailures = weir.Unlimited
	}
	p := weir.NewPipeline(weir.WithName(name), weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce), weir.WithChaining(!k.unchained),
		weir.WithFailover(weir.FineGrainedFailover), weir.WithLog(func(l string) { k.logs.add(name + ": " + l) }),
		weir.WithCheckpoints(ck))
	if k.stall > 0 {
		weir.WithStallTimeout(k.stall, k.onStall)(p)
	}
	if k.standby && name != "ref" {
		weir.WithActiveStandby()(p)
	}
	if k.inject > 0 && name != "ref" {
		weir.WithInjectedFailures(k.inject, k.seed)(p)
		weir.WithRestartStrategy("fixed-delay", 100, 50*time.Millisecond, 0, 0)(p)
	}
	ev := weir.FromSource(p, "events", connector.Source[jobs.KeyEvent](k.src), weir.WithTimestamps(func(e jobs.KeyEvent) int64 { return e.Time }, 0))
	w := weir.WindowBy(weir.KeyBy(ev, func(e jobs.KeyEvent) int64 { return e.Key }), weir.Tumbling(100*time.Millisecond))
	counts := weir.AggregateWindow(w, weir.Count[jobs.KeyEvent](), weir.Name("count"))
	rows := weir.Map(counts, func(w weir.Windowed[int64, int64]) string { return fmt.Sprint(w.Key, w.Window.Start, w.Value) }, weir.Name("format"))
	weir.To(rows, "output", file.JSONSink[string](args[0]))
	return pipeline{p}, nil
}

// On a cluster, fine-grained failover restarts the subtasks of a lost
// worker alone, on a spare worker, while the others run on: the source
// subtask of the surviving worker is never reopened (never rewinds), and
// the output equals a one-process run's.
func TestClusterRestartsTheSubtasksOfALostWorkerAlone(t *testing.T) {
	logs, src := loseAWorker{after: 2, victim: 1}.run(t)
	logs.wait(t, "restarting subtasks .* of a lost worker on worker w3")
	logs.wait(t, ": failure 1: .*restarting [0-9]+ of [0-9]+ subtasks")
	if n := src.opens[0].Load(); n != 1 {
		t.Fatalf("the surviving source subtask was opened %d times, want once: it rewound", n)
	}
	if n := src.opens[1].Load(); n != 2 {
		t.Fatalf("the lost source subtask was opened %d times, want twice", n)
	}
}

// A lost worker's task that merges several inputs and feeds another task
// cannot restart alone: the order it consumed its inputs in was logged
// on that worker. The job falls back to a global rollback, and the output
// is still exact.
func TestClusterFallsBackToAGlobalRollbackWithoutTheLostConsumptionOrder(t *testing.T) {
	logs, src := loseAWorker{unchained: true, after: 2, victim: 1}.run(t)
	logs.wait(t, ": failure 2: .*the order in which it consumed its inputs since checkpoint [0-9]+ was not kept.*; restarting in")
	if n := src.opens[0].Load(); n < 2 {
		t.Fatalf("the surviving source subtask was opened %d times, want it rewound by the global rollback", n)
	}
}

// With active standbys on a cluster, the standbys of a lost worker's
// window and format subtasks, which ran on the other worker, take their
// place: the job does not fall back to a global rollback (as it does
// without them, above), the surviving source never rewinds, and the
// output is exact.
func TestClusterActiveStandbyTakesTheLostWorkersPlace(t *testing.T) {
	logs, src := loseAWorker{unchained: true, standby: true, after: 2, victim: 1}.run(t)
	logs.wait(t, "active standbys of subtasks 1.1, 2.1 on worker w[12]")
	logs.wait(t, "the active standbys of subtasks 1.1, 2.1 on worker w[12] take their place")
	logs.wait(t, "took their place")
	if n := src.opens[0].Load(); n != 1 {
		t.Fatalf("the surviving source subtask was opened %d times, want once: it rewound", n)
	}
	if n := logs.count(`^windows-1: failure [0-9]+: worker w[12] lost`); n != 1 {
		t.Fatalf("the engine took the worker's loss as %d failures, want one", n)
	}
}

// The cluster's oracle under fine-grained failover: both job shapes, and
// the unchained one with active standbys (and a deterministic source),
// with failures injected into single subtasks at random and a worker
// lost at a random checkpoint, give a one-process run's output exactly.
func TestClusterOracleFineGrained(t *testing.T) {
	seeds := 3
	if testing.Short() {
		seeds = 2
	}
	if n, err := strconv.Atoi(os.Getenv("WEIR_ORACLE_SEEDS")); err == nil && n > 0 {
		seeds = n // more, while debugging
	}
	for _, shape := range []struct{ unchained, standby bool }{{false, false}, {true, false}, {true, true}} {
		for seed := range uint64(seeds) {
			sc := loseAWorker{unchained: shape.unchained, standby: shape.standby, inject: 2, seed: seed + 1, after: 1 + int(seed%3), victim: int32(seed % 2)}
			t.Run(fmt.Sprintf("unchained=%v/standby=%v/seed=%d", shape.unchained, shape.standby, seed+1), func(t *testing.T) { sc.run(t) })
		}
	}
}

// Failures injected at the named points of the checkpoint protocol reach
// the subtasks on the workers: each asks the coordinator's failure
// schedule at each point. With six failures per run, about half armed at
// named points, and no worker lost, the output is exact, with and
// without active standbys. Whether an armed point occurs before the job
// ends depends on timing, so seeds are tried until a run had a failure
// at a named point (at most 3, each checked for exact output).
func TestClusterInjectsFailuresAtNamedPoints(t *testing.T) {
	for _, standby := range []bool{false, true} {
		t.Run(fmt.Sprintf("standby=%v", standby), func(t *testing.T) {
			var all []string
			for seed := uint64(6); seed < 9; seed++ {
				logs, _ := loseAWorker{unchained: true, standby: standby, inject: 6, seed: seed, keep: true}.run(t)
				named := logs.count(`^windows-1: failure [0-9]+: .*injected failure (during|after)-`)
				t.Logf("seed %d: %d of %d failures at named points", seed, named, logs.count(`^windows-1: failure [0-9]+: .*injected failure`))
				if named > 0 {
					return
				}
				all = append(all, logs.lines...)
			}
			t.Fatalf("no failure was injected at a named point:\n%s", strings.Join(all, "\n"))
		})
	}
}

// loseAWorker runs keyedWindows on a cluster of two workers, stops the
// one that runs subtask victim of the source once after checkpoints
// completed and a third worker joined, and checks that the job finishes
// with a one-process run's output. run returns the logs and the source's
// opens during the cluster run. With keep, no worker is lost; with
// script, the script acts on the running job instead (and before, if
// set, on the cluster before the job is submitted).
type loseAWorker struct {
	unchained bool
	inject    int
	seed      uint64
	after     int
	victim    int32
	standby   bool
	keep      bool
	events    int64 // 0: 400,000 (two seconds)
	before    func(*testing.T, *windowsCluster)
	script    func(*testing.T, *windowsCluster)
	// source wraps the job's source; timeout is its checkpoints' timeout,
	// stall its stall timeout, for a scenario that makes the job stall.
	// Without stall, a job that stalls for stallBound fails the test with
	// its report of what it waits on and the goroutines' stacks.
	source         func(connector.Source[jobs.KeyEvent]) connector.Source[jobs.KeyEvent]
	timeout, stall time.Duration
}

// stallBound is how long a scenario's job that is not meant to stall may
// make no progress: far longer than any pause of these small jobs, even
// on a loaded machine, and shorter than a test's waits for the log.
const stallBound = 20 * time.Second

// windowsCluster is the cluster a loseAWorker scenario runs its job on.
type windowsCluster struct {
	ctx     context.Context
	co      *cluster.Coordinator
	prog    keyedWindows
	logs    *logLines
	workers map[string]*runningWorker
	client  pb.CoordinatorClient
	job     string
}

// start starts worker id, a passive standby with standby.
func (c *windowsCluster) start(t *testing.T, id string, passive bool) {
	c.workers[id] = startWorker(t, c.ctx, cluster.WorkerConfig{ID: id, Coordinators: []string{c.co.Addr()}, Program: c.prog, PassiveStandby: passive,
		Log: func(l string) { c.logs.add(id + ": " + l) }})
	c.logs.wait(t, "worker "+id+" joined")
}

// stop stops worker id: it is lost.
func (c *windowsCluster) stop(id string) {
	c.workers[id].stop()
	delete(c.workers, id)
}

// workerOf returns the worker that runs subtask i of vertex v now.
func (c *windowsCluster) workerOf(t *testing.T, v, i int32) string {
	t.Helper()
	info, err := c.client.GetJob(c.ctx, &pb.GetJobRequest{Id: c.job})
	if err != nil {
		t.Fatal(err)
	}
	w := workerOfSubtask(info, v, i)
	if w == "" {
		t.Fatalf("no worker runs subtask %d.%d", v, i)
	}
	return w
}

func (sc loseAWorker) run(t *testing.T) (*logLines, *openedBySubtask) {
	t.Helper()
	dir := t.TempDir()
	logs := newLogLines()
	logs.dumpOnFailure(t)
	c := jobs.KeyCountConfig{Events: cmp.Or(sc.events, 400_000), Keys: 50, Window: 100 * time.Millisecond, TPS: 100_000, Seed: 7}
	var gen connector.Source[jobs.KeyEvent] = generator.New(c.Events, c.Event, generator.WithRate(200_000))
	if sc.source != nil {
		gen = sc.source(gen)
	}
	src := &openedBySubtask{Source: gen, opens: make([]atomic.Int32, 2), deterministic: sc.standby}
	prog := keyedWindows{store: filepath.Join(dir, "store"), src: src, logs: logs, unchained: sc.unchained, inject: sc.inject, seed: sc.seed, standby: sc.standby,
		timeout: sc.timeout, stall: sc.stall}
	if sc.stall == 0 {
		prog.stall, prog.onStall = stallBound, logs.stalled
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ref := filepath.Join(dir, "ref")
	rp, _ := prog.Open(ctx, "windows", "ref", []string{ref})
	if err := rp.(pipeline).p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	src.opens[0].Store(0)
	src.opens[1].Store(0)

	co, err := cluster.NewCoordinator(ctx, cluster.CoordinatorConfig{Listen: "127.0.0.1:0", Store: prog.store, Program: prog,
		HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Second, Log: logs.add})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	cl := &windowsCluster{ctx: ctx, co: co, prog: prog, logs: logs, workers: map[string]*runningWorker{}}
	defer func() {
		for _, w := range cl.workers {
			w.stop()
		}
	}()
	for _, id := range []string{"w1", "w2"} {
		cl.start(t, id, false)
	}
	conn, err := cluster.Security{}.Dial(co.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cl.client = pb.NewCoordinatorClient(conn)
	if sc.before != nil {
		sc.before(t, cl)
	}
	out := filepath.Join(dir, "out")
	info, err := cl.client.Submit(ctx, &pb.SubmitRequest{Job: "windows", Args: []string{out}})
	if err != nil {
		t.Fatal(err)
	}
	cl.job = info.Id
	switch {
	case sc.script != nil:
		sc.script(t, cl)
	case !sc.keep:
		logs.waitCount(t, "^"+info.Id+": checkpoint [0-9]+ completed", sc.after)
		cl.start(t, "w3", false)
		cl.stop(cl.workerOf(t, 0, sc.victim))
	}
	awaitFinished(t, ctx, cl.client, logs, info.Id)
	sameOutput(t, out, ref)
	return logs, src
}

// workerOfSubtask returns the worker running subtask i of vertex v.
func workerOfSubtask(info *pb.JobInfo, v, i int32) string {
	for _, w := range info.Workers {
		for _, s := range w.Subtasks {
			if s.Vertex == v && s.Subtask == i {
				return w.WorkerId
			}
		}
	}
	return ""
}
