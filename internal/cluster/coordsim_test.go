package cluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/cluster/simworker"
)

// A simulation runs a real coordinator in a process of its own
// (coordsim_proc_test.go) against simulated workers in this one
// (package simworker), which speak the worker protocol over real gRPC
// sessions but run no operators: what it measures is the coordinator.

// simConfig is one simulation: a job of subtasks subtasks (two tasks of
// half as many each) on workers simulated workers, checkpointing every
// interval. After warmup checkpoints it measures checkpoints more; with
// kill it then adds a spare worker and kills a worker of the job.
type simConfig struct {
	subtasks, workers   int
	interval            time.Duration
	warmup, checkpoints int
	kill                bool
	profile             string // the coordinator's CPU profile, if set
	timeout             time.Duration
}

// simResult is what a simulation measured.
type simResult struct {
	// deploy is the time from the job's submission until its shares were
	// deployed on every worker; deployBytes the size of the largest
	// Deploy message among them.
	deploy      time.Duration
	deployBytes int
	// cores is the coordinator process's CPU time over the wall-clock time
	// of the measured checkpoints.
	cores float64
	// delays are, per measured checkpoint, the time from the last
	// acknowledgement sent to its completion reaching the last worker.
	delays []time.Duration
	// decision is the time from the kill to the last surviving worker
	// told to cancel its share; restart to the last worker of the next
	// attempt deployed, whose largest Deploy message (with the
	// checkpoint to restore) had redeployBytes bytes.
	decision, restart time.Duration
	redeployBytes     int
	// recovered is the first checkpoint the next attempt completed on
	// all its workers (0: none measured).
	recovered int64
}

// simulate runs a simulation and returns its measures; it fails tb if the
// simulation does not get through.
func simulate(tb testing.TB, cfg simConfig) simResult {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	dir := tb.TempDir()
	storeDir := filepath.Join(dir, "store")
	coord, err := startSimCoordinator(dir, storeDir, cfg.profile)
	if err != nil {
		tb.Fatal(err)
	}
	failf := func(format string, args ...any) {
		tb.Helper()
		tb.Fatalf("%s\nthe coordinator's log ends:\n%s", fmt.Sprintf(format, args...), coord.tail())
	}
	log := simworker.NewLog()
	var workers []*simworker.Worker
	defer func() {
		for _, w := range workers {
			w.Kill()
		}
		if err := coord.stop(); err != nil {
			tb.Errorf("the coordinator process: %v", err)
		}
	}()
	parallelism := cfg.subtasks / 2
	slots := (parallelism + cfg.workers - 1) / cfg.workers
	shares := min(cfg.workers, parallelism) // placement takes a slot of each worker in turn
	start := func(i int) *simworker.Worker {
		w := simworker.Start(ctx, simworker.Config{ID: fmt.Sprintf("w%04d", i), Coordinator: coord.addr, Slots: slots, Store: storeDir}, log)
		workers = append(workers, w)
		return w
	}
	for i := range cfg.workers {
		start(i)
	}
	await := func(what string, ok func([]simworker.Event) bool) []simworker.Event {
		tb.Helper()
		var lost *simworker.Event
		evs, err := log.Await(ctx, func(evs []simworker.Event) bool {
			for _, e := range evs {
				if e.Kind == simworker.Ended {
					lost = &e
					return true
				}
			}
			return ok(evs)
		})
		switch {
		case err != nil:
			failf("waiting for %s: %v", what, err)
		case lost != nil:
			failf("waiting for %s: the session of worker %s ended: %v", what, lost.Worker, lost.Err)
		}
		return evs
	}
	await("the workers to join", func(evs []simworker.Event) bool { return simworker.Count(evs, simworker.Joined, 0) == cfg.workers })

	client := dial(tb, coord.addr)
	submitted := time.Now()
	_, err = client.Submit(ctx, &pb.SubmitRequest{Job: "sim", Args: []string{"--parallelism", strconv.Itoa(parallelism), "--interval", cfg.interval.String()}})
	if err != nil {
		failf("submitting: %v", err)
	}
	evs := await("the deployment", func(evs []simworker.Event) bool { return simworker.Count(evs, simworker.Deployed, 0) == shares })
	var res simResult
	deployed, _ := simworker.Last(evs, simworker.Deployed, submitted, "")
	res.deploy = deployed.Sub(submitted)
	res.deployBytes = simworker.LargestDeploy(evs, submitted)

	// Checkpoints count from the first the job triggered (a resumed job's
	// ids would not start at 1).
	first := int64(0)
	completedOnAll := func(id *int64, n int) func([]simworker.Event) bool {
		return func(evs []simworker.Event) bool {
			cs := simworker.Checkpoints(evs)
			if *id == 0 {
				for cid := range cs {
					if *id == 0 || cid < *id {
						*id = cid
					}
				}
			}
			c := cs[*id+int64(n)-1]
			return *id != 0 && c != nil && c.Completions >= shares
		}
	}
	await("the warm-up checkpoints", completedOnAll(&first, cfg.warmup))
	cpu0, cpuErr := coord.cpu()
	t0 := time.Now()
	evs = await("the measured checkpoints", completedOnAll(&first, cfg.warmup+cfg.checkpoints))
	cpu1, err := coord.cpu()
	if cpuErr == nil && err == nil {
		res.cores = float64(cpu1-cpu0) / float64(time.Since(t0))
	}
	cs := simworker.Checkpoints(evs)
	for id := first + int64(cfg.warmup); id < first+int64(cfg.warmup+cfg.checkpoints); id++ {
		c := cs[id]
		if c.Acks != shares {
			failf("checkpoint %d: %d workers acknowledged it, want %d", id, c.Acks, shares)
		}
		res.delays = append(res.delays, c.Delay())
	}
	if !cfg.kill {
		return res
	}

	// A spare worker joins, so that the next attempt finds its slots, and
	// a worker of the job is killed.
	start(cfg.workers)
	await("the spare worker to join", func(evs []simworker.Event) bool { return simworker.Count(evs, simworker.Joined, 0) == cfg.workers+1 })
	victim := workers[0]
	victim.Kill()
	evs = log.Events()
	killed, _ := simworker.Last(evs, simworker.Killed, time.Time{}, "")
	evs = await("the recovery", func(evs []simworker.Event) bool {
		_, cancelled := simworker.Last(evs, simworker.Cancelled, killed, victim.ID())
		_, redeployed := simworker.Last(evs, simworker.Deployed, killed, victim.ID())
		return cancelled >= shares-1 && redeployed >= shares
	})
	cancelledAt, _ := simworker.Last(evs, simworker.Cancelled, killed, victim.ID())
	redeployedAt, _ := simworker.Last(evs, simworker.Deployed, killed, victim.ID())
	res.decision, res.restart = cancelledAt.Sub(killed), redeployedAt.Sub(killed)
	res.redeployBytes = simworker.LargestDeploy(evs, killed)
	// The next attempt checkpoints: its first checkpoint completes on every
	// worker it runs on.
	var again int64
	await("a checkpoint of the next attempt", func(evs []simworker.Event) bool {
		for _, e := range evs {
			if e.Kind == simworker.Completed && e.At.After(redeployedAt) && (again == 0 || e.Checkpoint < again) {
				again = e.Checkpoint
			}
		}
		return again != 0 && simworker.Checkpoints(evs)[again].Completions >= shares
	})
	res.recovered = again
	return res
}

// A tiny simulation completes checkpoints, and a lost worker leads to a
// recovery: the survivors are told to cancel their shares, the job is
// deployed again, with the spare worker, and checkpoints again.
func TestCoordinatorSimulation(t *testing.T) {
	res := simulate(t, simConfig{subtasks: 20, workers: 3, interval: 100 * time.Millisecond, warmup: 1, checkpoints: 2,
		kill: true, timeout: time.Minute})
	t.Logf("deployed in %v (%d bytes); checkpoints completed %v after their last acknowledgements; cancelled %v and deployed again %v (%d bytes) after the kill",
		res.deploy, res.deployBytes, res.delays, res.decision, res.restart, res.redeployBytes)
	if len(res.delays) != 2 {
		t.Fatalf("%d checkpoints measured, want 2", len(res.delays))
	}
	for i, d := range res.delays {
		if d <= 0 {
			t.Errorf("checkpoint %d completed %v after its last acknowledgement, want after it", i, d)
		}
	}
	if res.decision <= 0 || res.restart < res.decision {
		t.Errorf("recovery: cancelled after %v, deployed again after %v", res.decision, res.restart)
	}
	if res.recovered == 0 {
		t.Error("no checkpoint after the recovery")
	}
}

// BenchmarkCoordinatorScale runs the coordinator (weir coordinator's
// code, in a process of its own) against simulated workers, for jobs of
// 100 to 10,000 subtasks, checkpointing every second with heartbeats at
// the default interval, and reports per configuration: the coordinator's
// CPU time per second of checkpointing (coordinator-cores), the median
// and worst time from a checkpoint's last acknowledgement to its
// completion reaching every worker (complete-ms, complete-max-ms), the
// time from a worker's kill to the survivors told to cancel
// (decision-ms) and to the job deployed again (restart-ms), and the time
// to deploy the job (deploy-ms), and the size of the largest Deploy
// message of the first deployment and of the one after the kill
// (deploy-bytes, redeploy-bytes). WEIR_COORDSIM_CPUPROFILE_DIR, if set,
// receives the coordinator's CPU profile of each configuration.
//
//	go test ./internal/cluster -run XXX -bench CoordinatorScale -benchtime 1x
func BenchmarkCoordinatorScale(b *testing.B) {
	for _, c := range []struct{ subtasks, workers int }{{100, 10}, {1000, 30}, {5000, 100}, {10000, 100}, {10000, 300}} {
		b.Run(fmt.Sprintf("subtasks=%d/workers=%d", c.subtasks, c.workers), func(b *testing.B) {
			var cores []float64
			var delays, worst, decisions, restarts, deploys []time.Duration
			var deployBytes, redeployBytes []int
			for i := range b.N {
				cfg := simConfig{subtasks: c.subtasks, workers: c.workers, interval: time.Second, warmup: 3, checkpoints: 10,
					kill: true, timeout: 10 * time.Minute}
				if dir := os.Getenv("WEIR_COORDSIM_CPUPROFILE_DIR"); dir != "" {
					cfg.profile = filepath.Join(dir, fmt.Sprintf("coordinator-%d-%d-%d.pprof", c.subtasks, c.workers, i))
				}
				r := simulate(b, cfg)
				b.Logf("coordinator %.3f cores; deployed in %v (%d bytes); checkpoints completed %v after their last acknowledgements; cancelled %v and deployed again %v (%d bytes) after the kill",
					r.cores, r.deploy, r.deployBytes, r.delays, r.decision, r.restart, r.redeployBytes)
				cores = append(cores, r.cores)
				delays = append(delays, median(r.delays))
				worst = append(worst, slices.Max(r.delays))
				decisions = append(decisions, r.decision)
				restarts = append(restarts, r.restart)
				deploys = append(deploys, r.deploy)
				deployBytes = append(deployBytes, r.deployBytes)
				redeployBytes = append(redeployBytes, r.redeployBytes)
			}
			slices.Sort(cores)
			b.ReportMetric(cores[len(cores)/2], "coordinator-cores")
			b.ReportMetric(ms(median(delays)), "complete-ms")
			b.ReportMetric(ms(median(worst)), "complete-max-ms")
			b.ReportMetric(ms(median(decisions)), "decision-ms")
			b.ReportMetric(ms(median(restarts)), "restart-ms")
			b.ReportMetric(ms(median(deploys)), "deploy-ms")
			slices.Sort(deployBytes)
			slices.Sort(redeployBytes)
			b.ReportMetric(float64(deployBytes[len(deployBytes)/2]), "deploy-bytes")
			b.ReportMetric(float64(redeployBytes[len(redeployBytes)/2]), "redeploy-bytes")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
