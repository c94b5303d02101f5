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
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	logs := newLogLines()
	prog := keycountProgram{store: store, logs: logs, parallelism: 2, rate: 100_000}
	t.Cleanup(func() {
		if t.Failed() {
			logs.mu.Lock()
			defer logs.mu.Unlock()
			t.Logf("logged:\n%s", strings.Join(logs.lines, "\n"))
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	ref := filepath.Join(dir, "ref")
	rp, _ := prog.build("ref", []string{ref})
	if err := rp.Run(ctx); err != nil {
		t.Fatal(err)
	}

	c, err := cluster.NewCoordinator(ctx, cluster.CoordinatorConfig{Listen: "127.0.0.1:0", Store: store, Program: prog,
		HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Second, Log: logs.add})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	client := dial(t, c.Addr())
	var workers []*runningWorker
	defer func() {
		for _, w := range workers {
			w.stop()
		}
	}()
	for i := 1; i <= 3; i++ {
		workers = append(workers, startWorker(t, ctx, cluster.WorkerConfig{ID: fmt.Sprintf("w%d", i), Coordinators: []string{c.Addr()}, Program: prog, Log: logs.add}))
		logs.wait(t, fmt.Sprintf("^worker w%d joined", i))
	}

	out := filepath.Join(dir, "out")
	info, err := client.Submit(ctx, &pb.SubmitRequest{Job: "keycount", Args: []string{out}})
	if err != nil {
		t.Fatal(err)
	}
	logs.wait(t, "^"+info.Id+": checkpoint 2 completed")
	if _, err := client.Rescale(ctx, &pb.RescaleRequest{Id: info.Id, Operator: "nope", Parallelism: 3}); err == nil || !strings.Contains(err.Error(), `no operator named "nope"`) {
		t.Fatalf("an unknown operator: got %v", err)
	}
	up, err := client.Rescale(ctx, &pb.RescaleRequest{Id: info.Id, Operator: "count", Parallelism: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !up.Live || up.From != 2 || up.To != 3 || up.Checkpoint == 0 || up.Replaced == 0 {
		t.Fatalf("the rescale answered %v, want a live one from 2 to 3", up)
	}
	logs.wait(t, fmt.Sprintf("^%s: checkpoint %d completed", info.Id, up.Checkpoint+1))
	down, err := client.Rescale(ctx, &pb.RescaleRequest{Id: info.Id, Operator: "count", Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !down.Live || down.From != 3 || down.To != 1 {
		t.Fatalf("the second rescale answered %v, want a live one from 3 to 1", down)
	}
	final := awaitFinished(t, ctx, client, logs, info.Id)
	sameOutput(t, out, ref)
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
	if !strings.Contains(strings.Join(final.Args, " "), "--task-parallelism") {
		t.Fatalf("the job's arguments %q do not carry the rescale", final.Args)
	}
}

// After a live rescale a worker is lost: the job restarts from its latest
// checkpoint at the parallelism the rescale set (spread over the
// remaining workers), not at the one its arguments had, and its output
// still equals a one-process run's.
func TestALiveRescaleSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	logs := newLogLines()
	prog := keycountProgram{store: store, logs: logs, parallelism: 2, rate: 100_000}
	t.Cleanup(func() {
		if t.Failed() {
			logs.mu.Lock()
			defer logs.mu.Unlock()
			t.Logf("logged:\n%s", strings.Join(logs.lines, "\n"))
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ref := filepath.Join(dir, "ref")
	rp, _ := prog.build("ref", []string{ref})
	if err := rp.Run(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := cluster.NewCoordinator(ctx, cluster.CoordinatorConfig{Listen: "127.0.0.1:0", Store: store, Program: prog,
		HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Second, ReplacementTimeout: 10 * time.Millisecond, Log: logs.add})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	client := dial(t, c.Addr())
	var workers []*runningWorker
	defer func() {
		for _, w := range workers {
			w.stop()
		}
	}()
	for i := 1; i <= 3; i++ {
		workers = append(workers, startWorker(t, ctx, cluster.WorkerConfig{ID: fmt.Sprintf("w%d", i), Coordinators: []string{c.Addr()}, Program: prog, Log: logs.add}))
		logs.wait(t, fmt.Sprintf("^worker w%d joined", i))
	}
	out := filepath.Join(dir, "out")
	info, err := client.Submit(ctx, &pb.SubmitRequest{Job: "keycount", Args: []string{out}})
	if err != nil {
		t.Fatal(err)
	}
	logs.wait(t, "^"+info.Id+": checkpoint 2 completed")
	up, err := client.Rescale(ctx, &pb.RescaleRequest{Id: info.Id, Operator: "count", Parallelism: 3})
	if err != nil {
		t.Fatal(err)
	}
	logs.wait(t, fmt.Sprintf("^%s: checkpoint %d completed", info.Id, up.Checkpoint+1))
	lost := workers[2]
	workers = workers[:2]
	lost.stop()
	logs.wait(t, "^worker w3 lost")
	restored := logs.waitMatch(t, "^"+info.Id+": failure 1: worker w3 lost.* from checkpoint (\\d+)$")[1]
	final := awaitFinished(t, ctx, client, logs, info.Id)
	sameOutput(t, out, ref)
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
