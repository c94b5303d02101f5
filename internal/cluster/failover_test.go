package cluster_test

import (
	"context"
	"fmt"
	"path/filepath"
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

// twoPipelines runs two independent keyed window counts, "a" and "b",
// with fine-grained failover; args[0] is the output directory.
type twoPipelines struct {
	store string
	opens map[string][]atomic.Int32 // per pipeline, per source subtask
	logs  *logLines
}

func (twoPipelines) Jobs() []string { return []string{"two"} }

func (t twoPipelines) Open(_ context.Context, _, name string, args []string) (cluster.Pipeline, error) {
	p := weir.NewPipeline(weir.WithName(name), weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithFailover(weir.FineGrainedFailover), weir.WithLog(func(l string) { t.logs.add(name + ": " + l) }),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 100 * time.Millisecond, StateDir: t.store, Log: true}))
	for i, n := range []string{"a", "b"} {
		c := jobs.KeyCountConfig{Events: 300_000, Keys: 50, Window: 100 * time.Millisecond, TPS: 100_000, Seed: uint64(i + 1)}
		src := &openedBySubtask{Source: generator.New(c.Events, c.Event, generator.WithRate(200_000)), opens: t.opens[n]}
		ev := weir.FromSource(p, n+"-events", connector.Source[jobs.KeyEvent](src), weir.WithTimestamps(func(e jobs.KeyEvent) int64 { return e.Time }, 0))
		w := weir.WindowBy(weir.KeyBy(ev, func(e jobs.KeyEvent) int64 { return e.Key }), weir.Tumbling(c.Window))
		counts := weir.AggregateWindow(w, weir.Count[jobs.KeyEvent](), weir.Name(n+"-count"))
		rows := weir.Map(counts, func(w weir.Windowed[int64, int64]) string { return fmt.Sprint(w.Key, w.Window.Start, w.Value) }, weir.Name(n+"-format"))
		weir.To(rows, n+"-output", file.JSONSink[string](filepath.Join(args[0], n)))
	}
	return pipeline{p}, nil
}

// On a cluster, fine-grained failover restarts only the subtasks of the
// lost worker, in both pipelines: the source subtasks of the other
// workers are never reopened, and both outputs equal a one-process run's.
func TestClusterFineGrainedFailover(t *testing.T) {
	dir := t.TempDir()
	logs := newLogLines()
	prog := twoPipelines{store: filepath.Join(dir, "store"), opens: map[string][]atomic.Int32{"a": make([]atomic.Int32, 2), "b": make([]atomic.Int32, 2)}, logs: logs}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ref := filepath.Join(dir, "ref")
	rp, _ := prog.Open(ctx, "two", "ref", []string{ref})
	if err := rp.(pipeline).p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	for _, o := range prog.opens {
		o[0].Store(0)
		o[1].Store(0)
	}

	c, err := cluster.NewCoordinator(ctx, cluster.CoordinatorConfig{Listen: "127.0.0.1:0", Store: prog.store, Program: prog,
		HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Second, Log: logs.add})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	workers := map[string]*runningWorker{}
	defer func() {
		for _, w := range workers {
			w.stop()
		}
	}()
	for i := 1; i <= 3; i++ { // two slots, and a spare
		id := fmt.Sprintf("w%d", i)
		workers[id] = startWorker(t, ctx, cluster.WorkerConfig{ID: id, Coordinators: []string{c.Addr()}, Program: prog})
	}
	conn, err := cluster.Security{}.Dial(c.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewCoordinatorClient(conn)
	out := filepath.Join(dir, "out")
	info, err := client.Submit(ctx, &pb.SubmitRequest{Job: "two", Args: []string{out}})
	if err != nil {
		t.Fatal(err)
	}
	// Once the job runs, stop the worker that runs subtask 1 of every
	// task (slot sharing).
	logs.wait(t, "^"+info.Id+": checkpoint 2 completed")
	if info, err = client.GetJob(ctx, &pb.GetJobRequest{Id: info.Id}); err != nil {
		t.Fatal(err)
	}
	stopped := false
	if w := workerOfSubtask(info, 0, 1); w != "" {
		workers[w].stop()
		delete(workers, w)
		stopped = true
	}
	info = awaitFinished(t, ctx, client, logs, info.Id)
	if !stopped {
		t.Fatal("no worker was stopped during the run")
	}
	if info.Guarantee != "exactly-once" || info.Failover != "fine-grained" {
		t.Fatalf("job info shows %q with %q failover", info.Guarantee, info.Failover)
	}
	for n, o := range prog.opens {
		if got := o[0].Load(); got != 1 {
			t.Fatalf("pipeline %s: the surviving source subtask was opened %d times, want once: it rewound", n, got)
		}
		if got := o[1].Load(); got != 2 {
			t.Fatalf("pipeline %s: the lost source subtask was opened %d times, want twice", n, got)
		}
	}
	for _, n := range []string{"a", "b"} {
		sameOutput(t, filepath.Join(out, n), filepath.Join(ref, n))
	}
}
