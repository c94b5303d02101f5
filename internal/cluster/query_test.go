package cluster_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
)

// A running job's info carries its plan and tasks, and each subtask's
// metrics as its worker's heartbeats report them, with the worker's id;
// the coordinator's figures count its workers, slots and jobs by state.
func TestJobInfoCarriesThePlanAndTheSubtasksMetrics(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	logs := newLogLines()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// keycount, slowly, until cancelled.
	endless := keycountProgram{store: store, logs: logs, job: "endless", parallelism: 2, events: 1 << 40, keys: 20, rate: 20_000, latency: 50 * time.Millisecond}
	c, err := cluster.NewCoordinator(ctx, cluster.CoordinatorConfig{Listen: "127.0.0.1:0", Store: store, Program: endless,
		HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: 5 * time.Second, Log: logs.add})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, id := range []string{"w1", "w2"} {
		w := startWorker(t, ctx, cluster.WorkerConfig{ID: id, Coordinators: []string{c.Addr()}, Program: endless, Slots: 1})
		defer w.stop()
	}
	info, err := c.Submit(ctx, &pb.SubmitRequest{Job: "endless", Args: []string{filepath.Join(dir, "out")}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info.Plan, "task 1 [parallelism 2]") || len(info.Tasks) != 2 || !info.Tasks[0].Source || !info.Tasks[1].Sink {
		t.Fatalf("the job's plan: %q, tasks %v", info.Plan, info.Tasks)
	}

	// Until the heartbeats brought records, watermarks and latency
	// markers through every subtask (a hang guard of minutes).
	guard := time.Now().Add(3 * time.Minute)
	for !everySubtaskReported(info) {
		if time.Now().After(guard) {
			t.Fatalf("the subtasks' metrics never came: %v", info.Subtasks)
		}
		time.Sleep(50 * time.Millisecond) // the heartbeat interval
		if info, err = c.GetJob(ctx, &pb.GetJobRequest{Id: info.Id}); err != nil {
			t.Fatal(err)
		}
	}
	workers := map[string]bool{}
	for _, s := range info.Subtasks {
		workers[s.WorkerId] = true
		if s.IdleNs+s.BackpressuredNs+s.BusyNs == 0 || len(s.Latency.GetCounts()) != len(weir.LatencyBuckets)+1 {
			t.Errorf("subtask %v: idle %d, backpressured %d, busy %d ns, latency %v", s.Subtask, s.IdleNs, s.BackpressuredNs, s.BusyNs, s.Latency)
		}
	}
	if len(workers) != 2 {
		t.Errorf("the subtasks run on %v, want w1 and w2", workers)
	}
	st := c.Stats()
	if st.Workers != 2 || st.Slots != 2 || st.SlotsUsed != 2 || st.Epoch == 0 || !st.Leading || st.Jobs[cluster.Running] != 1 || len(st.Jobs) != 6 {
		t.Errorf("the coordinator's figures while the job runs: %+v", st)
	}

	if _, err := c.CancelJob(ctx, &pb.GetJobRequest{Id: info.Id}); err != nil {
		t.Fatal(err)
	}
	logs.wait(t, "^job "+info.Id+" cancelled")
	if st := c.Stats(); st.Jobs[cluster.Running] != 0 || st.Jobs[cluster.Cancelled] != 1 {
		t.Errorf("the coordinator's jobs once the job was cancelled: %v", st.Jobs)
	}
}

// everySubtaskReported says whether info has every subtask's metrics
// with records in, and, past the sources, a watermark and the input
// holding it back.
func everySubtaskReported(info *pb.JobInfo) bool {
	if len(info.Subtasks) != 4 {
		return false
	}
	for _, s := range info.Subtasks {
		source := s.Subtask.GetVertex() == 0
		if !s.Reported || s.WorkerId == "" || s.RecordsIn == 0 ||
			!source && (s.Watermark == dataflow.MinWatermark || s.WatermarkHeldBackBy == "" || len(s.Latency.GetCounts()) == 0) {
			return false
		}
	}
	return true
}
