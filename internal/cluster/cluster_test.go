package cluster_test

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/cli/jobs"
	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
)

// keycountProgram runs keycount with exactly-once checkpoints every
// 100 ms: 400,000 events over 100 keys at 400,000 a second and
// parallelism 3 unless its fields say otherwise. Its first argument is
// the output directory; after it --parallelism N, --rate N (events per
// second), --failover F, and what a resuming coordinator adds (--restore
// latest).
type keycountProgram struct {
	store string
	logs  *logLines
	// job names the job (default keycount); the others change the
	// defaults above when set. latency turns latency tracking on.
	job          string
	parallelism  int
	events, keys int64
	rate         float64
	latency      time.Duration
}

func (k keycountProgram) Jobs() []string { return []string{cmp.Or(k.job, "keycount")} }

func (k keycountProgram) Open(_ context.Context, _, name string, args []string) (cluster.Pipeline, error) {
	p, err := k.build(name, args)
	if err != nil {
		return nil, err
	}
	return pipeline{p}, nil
}

func (k keycountProgram) build(name string, args []string) (*weir.Pipeline, error) {
	c := jobs.KeyCountConfig{Events: cmp.Or(k.events, 400_000), Keys: cmp.Or(k.keys, 100), Window: 100 * time.Millisecond,
		TPS: 100_000, Seed: 1, Rate: cmp.Or(k.rate, 400_000)}
	opts := []weir.Option{weir.WithName(name), weir.WithParallelism(cmp.Or(k.parallelism, 3)), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithLog(func(l string) { k.logs.add(name + ": " + l) }),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 100 * time.Millisecond, StateDir: k.store, Log: true})}
	if k.latency > 0 {
		opts = append(opts, weir.WithLatencyTracking(k.latency))
	}
	for i := 1; i+1 < len(args); i++ {
		switch v := args[i+1]; args[i] {
		case "--parallelism":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("--parallelism %q", v)
			}
			opts = append(opts, weir.WithParallelism(n))
		case "--rate":
			c.Rate, _ = strconv.ParseFloat(v, 64)
		case "--restore":
			opts = append(opts, weir.WithRestore(v))
		case "--failover":
			f, err := weir.ParseFailover(v)
			if err != nil {
				return nil, err
			}
			opts = append(opts, weir.WithFailover(f))
		case "--task-parallelism":
			tasks, err := plan.ParseTaskParallelism(v)
			if err != nil {
				return nil, err
			}
			opts = append(opts, weir.WithTaskParallelism(tasks))
		}
	}
	p := weir.NewPipeline(opts...)
	jobs.KeyCountPipeline(p, c, cli.JobConfig{Output: args[0]})
	return p, nil
}

// pipeline is a job as the cluster runs it (through Pipeline.Engine),
// keeping the pipeline to run it in this process too.
type pipeline struct{ p *weir.Pipeline }

func (p pipeline) Compile(ctx context.Context) (engine.Config, error) {
	return p.p.Engine().Compile(ctx)
}
func (p pipeline) Run(ctx context.Context, d engine.Deployer, f store.Fence, a *engine.Adoption) error {
	return p.p.Engine().Run(ctx, d, f, a)
}
func (p pipeline) Report() *engine.Report { return p.p.Engine().Report() }
func (p pipeline) Savepoint(ctx context.Context, dir string, stop, drain bool) (engine.SavepointResult, error) {
	return p.p.Engine().Savepoint(ctx, dir, stop, drain)
}
func (p pipeline) RescaleLive(ctx context.Context, tasks map[int]int) (engine.RescaleResult, error) {
	return p.p.Engine().RescaleLive(ctx, tasks)
}

// A coordinator and three workers in this process (so the race detector
// sees them) run keycount; one worker is closed mid-run and the job
// recovers on the others. The output equals a one-process run's.
func TestClusterInProcess(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	logs := newLogLines()
	prog := keycountProgram{store: store, logs: logs}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	ref := filepath.Join(dir, "ref")
	rp, _ := prog.Open(ctx, "keycount", "ref", []string{ref})
	if err := rp.(pipeline).p.Run(ctx); err != nil {
		t.Fatal(err)
	}

	c, err := cluster.NewCoordinator(ctx, cluster.CoordinatorConfig{Listen: "127.0.0.1:0", Store: store, Program: prog,
		HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Second, Log: logs.add})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	client := dial(t, c.Addr())
	if _, err := client.Submit(ctx, &pb.SubmitRequest{Job: "nosuchjob"}); status.Code(err) != codes.NotFound {
		t.Fatalf("submitting an unknown job: %v, want NotFound", err)
	}

	// Submitted before any worker joined, the job waits and says why.
	out := filepath.Join(dir, "out")
	info, err := client.Submit(ctx, &pb.SubmitRequest{Job: "keycount", Args: []string{out}})
	if err != nil {
		t.Fatal(err)
	}
	logs.wait(t, "^job "+info.Id+" waiting for 3 free slots: 0 free on 0 workers$")
	if info, err = client.GetJob(ctx, &pb.GetJobRequest{Id: info.Id}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info.Detail, "waiting for 3 free slots: 0 free on 0 workers") {
		t.Fatalf("a job without workers is %s (%q), want it waiting for slots", info.State, info.Detail)
	}
	if info.State != cluster.Waiting {
		t.Fatalf("state %s while waiting for slots", info.State)
	}

	workers := map[string]*runningWorker{}
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("w%d", i)
		workers[id] = startWorker(t, ctx, cluster.WorkerConfig{ID: id, Coordinators: []string{c.Addr()}, Program: prog})
	}
	defer func() {
		for _, r := range workers {
			r.stop()
		}
	}()
	// Once the job runs, stop the data plane and the session of a worker of
	// the attempt: to the others it is lost.
	logs.wait(t, "^"+info.Id+": checkpoint 2 completed")
	if info, err = client.GetJob(ctx, &pb.GetJobRequest{Id: info.Id}); err != nil {
		t.Fatal(err)
	}
	killed := false
	if len(info.Workers) > 0 {
		workers[info.Workers[0].WorkerId].stop()
		delete(workers, info.Workers[0].WorkerId)
		killed = true
	}
	awaitFinished(t, ctx, client, logs, info.Id)
	sameOutput(t, out, ref)
	if !killed {
		t.Fatal("no worker was stopped during the run")
	}
}
