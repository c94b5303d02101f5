package cluster_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/hook"
	"github.com/weir-stream/weir/internal/jobs"
)

// keycountProgram runs keycount with a fixed configuration; its only
// argument is the output directory.
type keycountProgram struct{ store string }

func (keycountProgram) Jobs() []string { return []string{"keycount"} }

func (k keycountProgram) Open(_ context.Context, _, name string, args []string) (cluster.Pipeline, error) {
	p := weir.NewPipeline(weir.WithName(name), weir.WithParallelism(3), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 100 * time.Millisecond, StateDir: k.store}))
	c := jobs.KeyCountConfig{Events: 400_000, Keys: 100, Window: 100 * time.Millisecond, TPS: 100_000, Seed: 1, Rate: 400_000}
	jobs.KeyCountPipeline(p, c, weir.JobConfig{Output: args[0]})
	return pipeline{p}, nil
}

type pipeline struct{ p *weir.Pipeline }

func (p pipeline) Compile(ctx context.Context) (engine.Config, error) { return hook.Compile(ctx, p.p) }
func (p pipeline) Run(ctx context.Context, d engine.Deployer) error {
	hook.SetDeployer(p.p, d)
	return p.p.Run(ctx)
}
func (p pipeline) Report() *engine.Report { return p.p.Report() }

// A coordinator and three workers in this process (so the race detector
// sees them) run keycount; one worker is closed mid-run and the job
// recovers on the others. The output equals a one-process run's.
func TestClusterInProcess(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	prog := keycountProgram{store: store}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	ref := filepath.Join(dir, "ref")
	rp, _ := prog.Open(ctx, "keycount", "ref", []string{ref})
	if err := rp.(pipeline).p.Run(ctx); err != nil {
		t.Fatal(err)
	}

	c, err := cluster.NewCoordinator(ctx, cluster.CoordinatorConfig{Listen: "127.0.0.1:0", Store: store, Program: prog,
		HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	conn, err := cluster.Security{}.Dial(c.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewCoordinatorClient(conn)
	if _, err := client.Submit(ctx, &pb.SubmitRequest{Job: "nosuchjob"}); status.Code(err) != codes.NotFound {
		t.Fatalf("submitting an unknown job: %v, want NotFound", err)
	}

	// Submitted before any worker joined, the job waits and says why.
	out := filepath.Join(dir, "out")
	info, err := client.Submit(ctx, &pb.SubmitRequest{Job: "keycount", Args: []string{out}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(info.Detail, "waiting for 3 free slots: 0 free on 0 workers") {
		if time.Now().After(deadline) {
			t.Fatalf("a job without workers is %s (%q), want it waiting for slots", info.State, info.Detail)
		}
		time.Sleep(10 * time.Millisecond)
		if info, err = client.GetJob(ctx, &pb.GetJobRequest{Id: info.Id}); err != nil {
			t.Fatal(err)
		}
	}
	if info.State != cluster.Waiting {
		t.Fatalf("state %s while waiting for slots", info.State)
	}

	type running struct {
		w      *cluster.Worker
		cancel context.CancelFunc
		done   chan error
	}
	workers := map[string]running{}
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("w%d", i)
		w, err := cluster.NewWorker(cluster.WorkerConfig{ID: id, Coordinator: c.Addr(), Program: prog})
		if err != nil {
			t.Fatal(err)
		}
		wctx, wcancel := context.WithCancel(ctx)
		r := running{w, wcancel, make(chan error, 1)}
		go func() { r.done <- w.Run(wctx) }()
		workers[id] = r
	}
	defer func() {
		for _, r := range workers {
			r.cancel()
			<-r.done
			r.w.Close()
		}
	}()
	killed := false
	for {
		info, err = client.GetJob(ctx, &pb.GetJobRequest{Id: info.Id})
		if err != nil {
			t.Fatal(err)
		}
		if !killed && info.RecordsWritten > 0 && len(info.Workers) > 0 {
			// Stop the data plane and the session of a worker of the
			// attempt: to the others it is lost.
			r := workers[info.Workers[0].WorkerId]
			r.cancel()
			<-r.done
			r.w.Close()
			delete(workers, info.Workers[0].WorkerId)
			killed = true
		}
		if info.State == cluster.Finished || info.State == cluster.Failed || info.State == cluster.Cancelled {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if info.State != cluster.Finished {
		t.Fatalf("job %s: %s", info.State, info.Error)
	}
	got, err := file.ReadLines(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := file.ReadLines(ref)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("cluster output (%d rows) differs from the one-process output (%d rows)", len(got), len(want))
	}
	if !killed {
		t.Fatal("no worker was stopped during the run")
	}
}
