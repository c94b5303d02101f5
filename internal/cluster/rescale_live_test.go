package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/engine"
)

// A coordinator and workers in this process (so the race detector sees
// them) run keycount at parallelism 2; its counting task is rescaled
// live to 3 (onto a third worker's slot) and then to 1 while the job
// runs: no attempt restarts, the sources keep reading, and the output
// equals a one-process run's. The job's record carries the change, and
// its report lists both live rescales.
func TestLiveRescaleInProcess(t *testing.T) {
	ip := startInProcess(t, keycountProgram{parallelism: 2, rate: 100_000}, cluster.CoordinatorConfig{
		HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Second}, 3)
	ctx, client, logs := ip.ctx, ip.client, ip.logs
	id, out := ip.submit()
	if _, err := client.Rescale(ctx, &pb.RescaleRequest{Id: id, Operator: "nope", Parallelism: 3}); err == nil || !strings.Contains(err.Error(), `no operator named "nope"`) {
		t.Fatalf("an unknown operator: got %v", err)
	}
	up, err := client.Rescale(ctx, &pb.RescaleRequest{Id: id, Operator: "count", Parallelism: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !up.Live || up.From != 2 || up.To != 3 || up.Checkpoint == 0 || up.Replaced == 0 {
		t.Fatalf("the rescale answered %v, want a live one from 2 to 3", up)
	}
	logs.wait(t, fmt.Sprintf("^%s: checkpoint %d completed", id, up.Checkpoint+1))
	down, err := client.Rescale(ctx, &pb.RescaleRequest{Id: id, Operator: "count", Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !down.Live || down.From != 3 || down.To != 1 {
		t.Fatalf("the second rescale answered %v, want a live one from 3 to 1", down)
	}
	final := awaitFinished(t, ctx, client, logs, id)
	sameOutput(t, out, ip.ref)
	var rep engine.Report
	if err := json.Unmarshal(final.Report, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Recoveries) != 0 || rep.Restored != 0 {
		t.Fatalf("the job restarted (recoveries %+v, restored %d): a live rescale restarts nothing", rep.Recoveries, rep.Restored)
	}
	if len(rep.Rescales) != 2 || !rep.Rescales[0].Live || !rep.Rescales[1].Live || rep.Rescales[1].Checkpoint != down.Checkpoint {
		t.Fatalf("the job's report lists rescales %+v, want two live ones", rep.Rescales)
	}
	if n := logs.count("running: the rescaled tasks restored checkpoint"); n == 0 {
		t.Fatal("no worker logged that rescaled tasks restored their checkpoint")
	}
	// From 2 to 3, new subtask 0 takes key groups and transactions of old
	// subtask 0 alone, on the same worker: it takes them in memory.
	if n := logs.count(fmt.Sprintf("running: the rescaled tasks took the state of checkpoint %d in memory", up.Checkpoint)); n != 1 {
		t.Fatalf("%d shares took the state of checkpoint %d in memory, want 1", n, up.Checkpoint)
	}
	if !strings.Contains(strings.Join(final.Args, " "), "--task-parallelism") {
		t.Fatalf("the job's arguments %q do not carry the rescale", final.Args)
	}
}

// After a live rescale a worker is lost: the job restarts from its latest
// checkpoint at the parallelism the rescale set (spread over the
// remaining workers), not at the one its arguments had, and its output
// still equals a one-process run's.
func TestALiveRescaleSurvivesARestart(t *testing.T) {
	ip := startInProcess(t, keycountProgram{parallelism: 2, rate: 100_000}, cluster.CoordinatorConfig{
		HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Second, ReplacementTimeout: 10 * time.Millisecond}, 3)
	ctx, client, logs := ip.ctx, ip.client, ip.logs
	id, out := ip.submit()
	up, err := client.Rescale(ctx, &pb.RescaleRequest{Id: id, Operator: "count", Parallelism: 3})
	if err != nil {
		t.Fatal(err)
	}
	logs.wait(t, fmt.Sprintf("^%s: checkpoint %d completed", id, up.Checkpoint+1))
	ip.stopWorker(2)
	// The coordinator learns of the loss either from w3's closed
	// connection or first from a survivor whose data-plane connection to
	// w3 broke; either is the failure that restarts the job.
	logs.wait(t, "^worker w3 lost")
	restored := logs.waitMatch(t, "^"+id+": failure 1: .* from checkpoint (\\d+)$")[1]
	final := awaitFinished(t, ctx, client, logs, id)
	sameOutput(t, out, ip.ref)
	var rep engine.Report
	if err := json.Unmarshal(final.Report, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Recoveries) == 0 || fmt.Sprint(rep.Recoveries[0].Restored) != restored || rep.Recoveries[0].Restored <= up.Checkpoint {
		t.Fatalf("recoveries %+v, want one from checkpoint %s, after the rescale's %d", rep.Recoveries, restored, up.Checkpoint)
	}
	if want := 2 + 3 + 0; rep.Recoveries[0].Subtasks < want {
		t.Fatalf("the restart ran %d subtasks, want the rescaled plan's", rep.Recoveries[0].Subtasks)
	}
}

// inProcess is a coordinator and workers in this process (so the race
// detector sees them) running prog's keycount, with the output of a
// one-process run of it for reference. The log is printed if the test
// fails; the coordinator and the workers stop when it ends.
type inProcess struct {
	t       *testing.T
	ctx     context.Context
	dir     string
	ref     string // the reference output
	logs    *logLines
	prog    keycountProgram
	c       *cluster.Coordinator
	client  pb.CoordinatorClient
	workers []*runningWorker
}

// startInProcess starts a coordinator configured by cfg (its listen
// address, store, program and log filled in) and n workers with one slot
// each (w1, w2, ...), logging into the cluster's log.
func startInProcess(t *testing.T, prog keycountProgram, cfg cluster.CoordinatorConfig, n int) *inProcess {
	t.Helper()
	dir := t.TempDir()
	logs := newLogLines()
	prog.store, prog.logs = filepath.Join(dir, "store"), logs
	ctx, cancel := context.WithCancel(context.Background())
	ip := &inProcess{t: t, ctx: ctx, dir: dir, ref: filepath.Join(dir, "ref"), logs: logs, prog: prog}
	t.Cleanup(func() {
		for _, w := range ip.workers {
			w.stop()
		}
		if ip.c != nil {
			ip.c.Close()
		}
		cancel()
		if t.Failed() {
			logs.mu.Lock()
			defer logs.mu.Unlock()
			t.Logf("logged:\n%s", strings.Join(logs.lines, "\n"))
		}
	})
	rp, _ := prog.build("ref", []string{ip.ref})
	if err := rp.Run(ctx); err != nil {
		t.Fatal(err)
	}
	cfg.Listen, cfg.Store, cfg.Program, cfg.Log = "127.0.0.1:0", prog.store, prog, logs.add
	c, err := cluster.NewCoordinator(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ip.c = c
	ip.client = dial(t, c.Addr())
	for range n {
		ip.addWorker()
	}
	return ip
}

// submit submits keycount with its output in the cluster's directory and
// args after it, and waits until its second checkpoint completed. It
// returns the job's id and its output directory.
func (ip *inProcess) submit(args ...string) (string, string) {
	ip.t.Helper()
	out := filepath.Join(ip.dir, "out")
	info, err := ip.client.Submit(ip.ctx, &pb.SubmitRequest{Job: "keycount", Args: append([]string{out}, args...)})
	if err != nil {
		ip.t.Fatal(err)
	}
	ip.logs.wait(ip.t, "^"+info.Id+": checkpoint 2 completed")
	return info.Id, out
}

// addWorker starts the next worker and waits until it joined.
func (ip *inProcess) addWorker() {
	ip.t.Helper()
	id := fmt.Sprintf("w%d", len(ip.workers)+1)
	ip.workers = append(ip.workers, startWorker(ip.t, ip.ctx, cluster.WorkerConfig{ID: id, Coordinators: []string{ip.c.Addr()}, Program: ip.prog, Log: ip.logs.add}))
	ip.logs.wait(ip.t, "^worker "+id+" joined")
}

// stopWorker stops worker i (0-based) and waits until the coordinator
// lost it.
func (ip *inProcess) stopWorker(i int) {
	ip.t.Helper()
	w := ip.workers[i]
	ip.workers = append(ip.workers[:i:i], ip.workers[i+1:]...)
	w.stop()
	ip.logs.wait(ip.t, fmt.Sprintf("^worker w%d lost", i+1))
}
