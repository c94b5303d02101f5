package cluster_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/jobs"
)

// counted counts the times its readers are opened.
type counted struct {
	connector.Source[jobs.KeyEvent]
	opens *atomic.Int32
}

func (c counted) Open(ctx context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[jobs.KeyEvent], error) {
	c.opens.Add(1)
	return c.Source.Open(ctx, info, pos)
}

// twoPipelines runs two independent keyed window counts, "a" and "b",
// with fine-grained failover; args[0] is the output directory.
type twoPipelines struct {
	store string
	opens map[string]*atomic.Int32
	logs  *logLines
}

func (twoPipelines) Jobs() []string { return []string{"two"} }

func (t twoPipelines) Open(_ context.Context, _, name string, args []string) (cluster.Pipeline, error) {
	p := weir.NewPipeline(weir.WithName(name), weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithFailover(weir.FineGrainedFailover), weir.WithLog(func(l string) { t.logs.add(name + ": " + l) }),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 100 * time.Millisecond, StateDir: t.store, Log: true}))
	for i, n := range []string{"a", "b"} {
		c := jobs.KeyCountConfig{Events: 300_000, Keys: 50, Window: 100 * time.Millisecond, TPS: 100_000, Seed: uint64(i + 1)}
		src := counted{generator.New(c.Events, c.Event, generator.WithRate(200_000)), t.opens[n]}
		ev := weir.FromSource(p, n+"-events", connector.Source[jobs.KeyEvent](src), weir.WithTimestamps(func(e jobs.KeyEvent) int64 { return e.Time }, 0))
		w := weir.WindowBy(weir.KeyBy(ev, func(e jobs.KeyEvent) int64 { return e.Key }), weir.Tumbling(c.Window))
		counts := weir.AggregateWindow(w, weir.Count[jobs.KeyEvent](), weir.Name(n+"-count"))
		rows := weir.Map(counts, func(w weir.Windowed[int64, int64]) string { return fmt.Sprint(w.Key, w.Window.Start, w.Value) }, weir.Name(n+"-format"))
		weir.To(rows, n+"-output", file.JSONSink[string](filepath.Join(args[0], n)))
	}
	return pipeline{p}, nil
}

// On a cluster, fine-grained failover restarts only the region whose
// worker was lost: the other pipeline's sources are never reopened, and
// both outputs equal a one-process run's.
func TestClusterFineGrainedFailover(t *testing.T) {
	dir := t.TempDir()
	logs := newLogLines()
	prog := twoPipelines{store: filepath.Join(dir, "store"), opens: map[string]*atomic.Int32{"a": {}, "b": {}}, logs: logs}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ref := filepath.Join(dir, "ref")
	rp, _ := prog.Open(ctx, "two", "ref", []string{ref})
	if err := rp.(pipeline).p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	prog.opens["a"].Store(0)
	prog.opens["b"].Store(0)

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
	for i := 1; i <= 5; i++ { // two regions of two slots, and a spare
		id := fmt.Sprintf("w%d", i)
		workers[id] = startWorker(t, ctx, cluster.WorkerConfig{ID: id, Coordinator: c.Addr(), Program: prog})
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
	// Once the job runs, stop a worker that runs a subtask of pipeline a's
	// source (vertex 0), and so none of pipeline b.
	logs.wait(t, "^"+info.Id+": checkpoint 2 completed")
	if info, err = client.GetJob(ctx, &pb.GetJobRequest{Id: info.Id}); err != nil {
		t.Fatal(err)
	}
	stopped := false
	if w := workerOf(info, 0); w != "" {
		workers[w].stop()
		delete(workers, w)
		stopped = true
	}
	logs.wait(t, "^job "+info.Id+" (finished|failed|cancelled)")
	if info, err = client.GetJob(ctx, &pb.GetJobRequest{Id: info.Id}); err != nil {
		t.Fatal(err)
	}
	if info.State != cluster.Finished {
		t.Fatalf("job %s: %s", info.State, info.Error)
	}
	if !stopped {
		t.Fatal("no worker was stopped during the run")
	}
	if info.Guarantee != "exactly-once" || info.Failover != "fine-grained" {
		t.Fatalf("job info shows %q with %q failover", info.Guarantee, info.Failover)
	}
	if n := prog.opens["b"].Load(); n != 2 {
		t.Fatalf("pipeline b's source was opened %d times, want 2: its region restarted", n)
	}
	if n := prog.opens["a"].Load(); n < 4 {
		t.Fatalf("pipeline a's source was opened %d times, want it restarted", n)
	}
	for _, n := range []string{"a", "b"} {
		got, err := file.ReadLines(filepath.Join(out, n))
		if err != nil {
			t.Fatal(err)
		}
		want, err := file.ReadLines(filepath.Join(ref, n))
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("pipeline %s: %d rows, want the one-process run's %d", n, len(got), len(want))
		}
	}
}

// workerOf returns a worker running a subtask of vertex v. Each region's
// attempt takes slots of its own and every worker has one slot, so that
// worker runs nothing of the other region.
func workerOf(info *pb.JobInfo, v int32) string {
	for _, w := range info.Workers {
		for _, s := range w.Subtasks {
			if s.Vertex == v {
				return w.WorkerId
			}
		}
	}
	return ""
}
