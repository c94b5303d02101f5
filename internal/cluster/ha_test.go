package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/engine"
)

// haCluster is a leader, a standby and three workers that know both.
type haCluster struct {
	store, dir     string
	logs           *logLines // the coordinators' and the jobs'
	workerLogs     *logLines
	prog           keycountProgram
	leader, backup *cluster.Coordinator
	workers        []*runningWorker
}

func newHACluster(t *testing.T, ctx context.Context) *haCluster {
	dir := t.TempDir()
	h := &haCluster{dir: dir, store: filepath.Join(dir, "store"), logs: newLogLines(), workerLogs: newLogLines()}
	h.prog = keycountProgram{store: h.store, logs: h.logs}
	// The lease is long enough that a leader on a loaded machine (the race
	// detector, other tests) does not miss its renewals and lose the lead
	// before the test takes it away.
	cfg := func(ha bool, who string) cluster.CoordinatorConfig {
		return cluster.CoordinatorConfig{Listen: "127.0.0.1:0", Store: h.store, Program: h.prog, HA: ha, LeasePeriod: time.Second,
			HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Second,
			Log: func(l string) { h.logs.add(who + ": " + l) }}
	}
	var err error
	if h.leader, err = cluster.NewCoordinator(ctx, cfg(false, "a")); err != nil {
		t.Fatal(err)
	}
	if h.backup, err = cluster.NewCoordinator(ctx, cfg(true, "b")); err != nil {
		t.Fatal(err)
	}
	h.logs.wait(t, "^b: the leader \\(epoch 1\\) serves at "+h.leader.Addr())
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("w%d", i)
		h.workers = append(h.workers, startWorker(t, ctx, cluster.WorkerConfig{ID: id, Coordinators: []string{h.leader.Addr(), h.backup.Addr()},
			Program: h.prog, Log: func(l string) { h.workerLogs.add(id + ": " + l) }}))
	}
	return h
}

func (h *haCluster) close() {
	for _, w := range h.workers {
		w.stop()
	}
	h.leader.Close()
	h.backup.Close()
}

// client returns a client of the leading coordinator.
func (h *haCluster) client(t *testing.T, ctx context.Context) pb.CoordinatorClient {
	conn, _, err := cluster.DialLeader(ctx, cluster.Security{}, []string{h.leader.Addr(), h.backup.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewCoordinatorClient(conn)
}

// The leader dies during a job's checkpoints; the standby takes over
// once the lease expires, adopts the attempt the workers kept running,
// and drives the job to its end: no task restarted, the output is the
// one-process run's.
func TestAStandbyAdoptsTheRunningAttemptOfACrashedLeader(t *testing.T) {
	testTakeover(t, nil, nil, func(h *haCluster) { h.leader.Abandon() }, 3)
}

// Under fine-grained failover the attempt is adopted the same way.
func TestAStandbyAdoptsAFineGrainedAttempt(t *testing.T) {
	testTakeover(t, []string{"--failover", "fine-grained"}, nil, func(h *haCluster) { h.leader.Abandon() }, 3)
}

// A handover passes the lead without waiting for the lease, and without
// restarting any task either.
func TestAHandoverPassesTheRunningAttemptToTheStandby(t *testing.T) {
	testTakeover(t, nil, nil, handover(t), 3)
}

// After a live rescale (the counting task from 3 to 2) the attempt runs
// in its three first shares and two successor shares, which together run
// each subtask once (the retired ones are not reported): a handover
// adopts all five, and no task restarts.
func TestAHandoverAfterALiveRescaleAdoptsTheRescaledAttempt(t *testing.T) {
	rescale := func(h *haCluster, id string) {
		r, err := h.client(t, t.Context()).Rescale(t.Context(), &pb.RescaleRequest{Id: id, Operator: "count", Parallelism: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Live {
			t.Fatalf("the rescale answered %v, want a live one", r)
		}
		h.logs.wait(t, fmt.Sprintf("^%s: checkpoint %d completed", id, r.Checkpoint+1))
	}
	testTakeover(t, nil, rescale, handover(t), 5)
}

// handover asks the leader to hand over.
func handover(t *testing.T) func(*haCluster) {
	return func(h *haCluster) {
		if _, err := h.client(t, t.Context()).Handover(t.Context(), &pb.HandoverRequest{}); err != nil {
			t.Fatalf("handover: %v", err)
		}
	}
}

// testTakeover runs keycount with args on an HA cluster, calls before
// (if not nil) once it took checkpoints, loses the leader, and checks
// that the standby adopts the attempt's shares and runs the job to its
// end with no task restarted.
func testTakeover(t *testing.T, args []string, before func(*haCluster, string), lose func(*haCluster), shares int) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	h := newHACluster(t, ctx)
	defer h.close()
	ref := filepath.Join(h.dir, "ref")
	rp, _ := h.prog.Open(ctx, "keycount", "ref", []string{ref})
	if err := rp.(pipeline).p.Run(ctx); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(h.dir, "out")
	info, err := h.client(t, ctx).Submit(ctx, &pb.SubmitRequest{Job: "keycount", Args: append([]string{out, "--rate", "80000"}, args...)})
	if err != nil {
		t.Fatal(err)
	}
	h.logs.wait(t, "^"+info.Id+": checkpoint 3 completed")
	h.workerLogs.waitCount(t, "^w[0-9]: joined coordinator", 3)
	if before != nil {
		before(h, info.Id)
	}
	lose(h)
	<-h.leader.Done()
	<-h.backup.Leading()
	h.logs.wait(t, fmt.Sprintf("^b: job %s: adopting its running attempt \\(%d shares\\)", info.Id, shares))
	h.workerLogs.waitCount(t, "adopted by the coordinator of epoch 2$", shares)
	client := h.client(t, ctx)
	final := awaitFinished(t, ctx, client, h.logs, info.Id)
	sameOutput(t, out, ref)

	var rep engine.Report
	if err := json.Unmarshal(final.Report, &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Adopted || len(rep.Recoveries) != 0 || rep.Completed == 0 {
		t.Fatalf("the new leader's run: adopted %v, %d recoveries, %d checkpoints completed; want adopted, none, some", rep.Adopted, len(rep.Recoveries), rep.Completed)
	}
	if lc := rep.LeaderChanges; len(lc) != 1 || !lc[0].Adopted || lc[0].Epoch != 2 {
		t.Fatalf("leader changes %+v, want one to epoch 2 that adopted the tasks", lc)
	}
	if n := h.workerLogs.count("cancelled|attempt .* running: restored|failed"); n != 0 {
		t.Fatalf("%d attempts were cancelled, failed or restarted on the workers", n)
	}
}

// The leader and a worker die together: the standby cannot adopt the
// attempt (a share is missing), so after the adopt timeout it cancels the
// shares the other workers still run and restarts the job from its
// latest checkpoint on the slots there are; the output is still the
// one-process run's.
func TestAStandbyRestartsAJobItCannotAdoptFromItsCheckpoint(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	h := newHACluster(t, ctx)
	defer h.close()
	h.workers = append(h.workers, startWorker(t, ctx, cluster.WorkerConfig{ID: "w4", Coordinators: []string{h.leader.Addr(), h.backup.Addr()},
		Program: h.prog, Log: func(l string) { h.workerLogs.add("w4: " + l) }}))
	ref := filepath.Join(h.dir, "ref")
	rp, _ := h.prog.Open(ctx, "keycount", "ref", []string{ref})
	if err := rp.(pipeline).p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(h.dir, "out")
	info, err := h.client(t, ctx).Submit(ctx, &pb.SubmitRequest{Job: "keycount", Args: []string{out, "--rate", "80000"}})
	if err != nil {
		t.Fatal(err)
	}
	h.logs.wait(t, "^"+info.Id+": checkpoint 3 completed")
	placed, err := h.client(t, ctx).GetJob(ctx, &pb.GetJobRequest{Id: info.Id})
	if err != nil || len(placed.Workers) == 0 {
		t.Fatalf("placement of the job: %v %v", placed, err)
	}
	victim := placed.Workers[0].WorkerId
	h.leader.Abandon()
	i := int(victim[1] - '1') // w1..w4
	h.workers[i].stop()
	h.workers = append(h.workers[:i], h.workers[i+1:]...)
	h.logs.wait(t, "^b: job "+info.Id+": no running attempt to adopt within .*: restarting it from its latest checkpoint")
	final := awaitFinished(t, ctx, h.client(t, ctx), h.logs, info.Id)
	sameOutput(t, out, ref)
	var rep engine.Report
	if err := json.Unmarshal(final.Report, &rep); err != nil {
		t.Fatal(err)
	}
	if lc := rep.LeaderChanges; len(lc) != 1 || lc[0].Adopted || lc[0].Epoch != 2 {
		t.Fatalf("leader changes %+v, want one to epoch 2 that restarted the job", lc)
	}
	if n := h.workerLogs.count("adopted by the coordinator"); n != 0 {
		t.Fatalf("%d shares were adopted though the attempt lacked one", n)
	}
}

// Workers whose coordinator is gone for good keep their tasks for the
// grace period only, counted from the loss of the session however often
// they try to reconnect meanwhile (every half second at most), and then
// cancel them: every share ends.
func TestWorkersCancelTheirTasksWhenNoCoordinatorAdoptsThemWithinTheGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	dir := t.TempDir()
	logs, workerLogs := newLogLines(), newLogLines()
	prog := keycountProgram{store: filepath.Join(dir, "store"), logs: logs, rate: 20_000, events: 1 << 40}
	c, err := cluster.NewCoordinator(ctx, cluster.CoordinatorConfig{Listen: "127.0.0.1:0", Store: prog.store, Program: prog,
		HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Second, Log: logs.add})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("w%d", i)
		w := startWorker(t, ctx, cluster.WorkerConfig{ID: id, Coordinators: []string{c.Addr()}, Program: prog, Grace: 2 * time.Second,
			Log: func(l string) { workerLogs.add(id + ": " + l) }})
		defer w.stop()
	}
	info, err := dial(t, c.Addr()).Submit(ctx, &pb.SubmitRequest{Job: "keycount", Args: []string{filepath.Join(dir, "out")}})
	if err != nil {
		t.Fatal(err)
	}
	logs.wait(t, "^"+info.Id+": checkpoint 2 completed")
	c.Abandon()
	// The first worker whose grace ends cancels its share; the shares
	// of the others may fail first, their data plane cut by that.
	workerLogs.wait(t, "^w[0-9]: attempt \\S+ cancelled: no coordinator adopted it within 2s")
	workerLogs.waitCount(t, "^w[0-9]: attempt \\S+ failed", 3)
}

// A superseded coordinator names the newer leader when asked, so that a
// client that reached it (before it learnt of its deposition, say) finds
// the leader at its next call.
func TestASupersededCoordinatorNamesTheNewLeader(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	a := newCoordinator(t, store, newLogLines())
	defer a.Close()
	b := newCoordinator(t, store, newLogLines())
	defer b.Close()
	<-a.Done()
	info, err := a.Leader(t.Context(), &pb.LeaderRequest{})
	if err != nil || info.Leading || info.LeaderAddr != b.Addr() || info.Epoch != 2 {
		t.Fatalf("the deposed coordinator answers %v %v, want not leading, the leader at %s with epoch 2", info, err, b.Addr())
	}
	conn, addr, err := cluster.DialLeader(t.Context(), cluster.Security{}, []string{a.Addr()})
	if err != nil {
		t.Fatalf("DialLeader from the deposed coordinator's address: %v", err)
	}
	conn.Close()
	if addr != b.Addr() {
		t.Fatalf("DialLeader found %s, want the new leader %s", addr, b.Addr())
	}
}
