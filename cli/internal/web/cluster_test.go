package web

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/cluster"
)

// clusterJob is a cluster's job with fixed metrics whose savepoints go
// through TakeSavepoint, as a coordinator's do.
type clusterJob struct {
	name   string
	tasks  []weir.TaskMetrics
	taken  *[]SavepointRequest
	report *weir.Report
}

func (j clusterJob) Name() string                { return j.name }
func (j clusterJob) Status() weir.JobStatus      { return weir.JobStatus{State: "running"} }
func (j clusterJob) Metrics() []weir.TaskMetrics { return j.tasks }
func (j clusterJob) Report() *weir.Report        { return j.report }
func (j clusterJob) Explain() (string, error)    { return "", nil }

func (j clusterJob) TakeSavepoint(_ context.Context, req SavepointRequest) (weir.Savepoint, error) {
	*j.taken = append(*j.taken, req)
	return weir.Savepoint{Path: req.Dir + "/" + j.name}, nil
}

// A cluster server labels each subtask's metrics with its worker, adds
// the coordinator's own, and sends a savepoint request to the job it
// names.
func TestClusterServerLabelsWorkersAndNamesTheSavepointsJob(t *testing.T) {
	var taken []SavepointRequest
	src := weir.TaskMetrics{Name: "src", Parallelism: 2, Source: true, Watermark: weir.EndOfTime}
	src.Add(weir.SubtaskMetrics{RecordsIn: 5, Watermark: weir.MinWatermark, Worker: "w1"})
	src.Add(weir.SubtaskMetrics{RecordsIn: 7, Watermark: weir.MinWatermark, Worker: "w2"})
	jobs := []Job{clusterJob{"a-1", []weir.TaskMetrics{src}, &taken, nil}, clusterJob{"b-2", nil, &taken, nil}}
	stats := cluster.Stats{Workers: 2, Slots: 4, SlotsUsed: 2, Epoch: 3, Leading: true, Jobs: map[string]int{"running": 2, "failed": 0}}
	s := NewClusterServer(func() []Job { return jobs }, func() cluster.Stats { return stats })
	s.DefaultSavepointDir = "/sp"

	_, body := get(t, s, "/metrics")
	for _, want := range []string{
		`weir_task_records_in_total{job="a-1",subtask="0",task="src",worker="w1"} 5`,
		`weir_task_records_in_total{job="a-1",subtask="1",task="src",worker="w2"} 7`,
		`weir_coordinator_workers 2`, `weir_coordinator_slots 4`, `weir_coordinator_slots_used 2`,
		`weir_coordinator_epoch 3`, `weir_coordinator_leading 1`,
		`weir_coordinator_jobs{state="running"} 2`, `weir_coordinator_jobs{state="failed"} 0`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %s:\n%s", want, body)
		}
	}
	if _, body := get(t, NewServer(jobs[0]), "/metrics"); strings.Contains(body, "worker=") || strings.Contains(body, "weir_coordinator_") {
		t.Errorf("a process's server labels workers or exports a coordinator's metrics:\n%s", body)
	}
	if _, body := get(t, s, "/api/v1/jobs/a-1/tasks"); !strings.Contains(body, `"worker": "w2"`) {
		t.Errorf("/api/v1/jobs/a-1/tasks names no worker:\n%s", body)
	}

	if code, body := post(t, s, "/api/v1/savepoints", `{"stop": true}`); code != 404 || !strings.Contains(body, "no single job") {
		t.Errorf("a savepoint naming no job of two: %d %s", code, body)
	}
	if code, body := post(t, s, "/api/v1/savepoints", `{"job": "b-2", "drain": true}`); code != 200 || !strings.Contains(body, `"/sp/b-2"`) {
		t.Errorf("a savepoint of b-2: %d %s", code, body)
	}
	if want := (SavepointRequest{Dir: "/sp", Drain: true, Job: "b-2"}); len(taken) != 1 || taken[0] != want {
		t.Errorf("the jobs were asked for %+v, want %+v", taken, want)
	}
	if code, body := post(t, s, "/api/v1/savepoints", `{"job": "c-3"}`); code != 404 || !strings.Contains(body, `no job named \"c-3\"`) {
		t.Errorf("a savepoint of an unknown job: %d %s", code, body)
	}
}

// A cluster job's rescales and leader changes are served, and a job
// without any has empty lists.
func TestTheChangesOfAClusterJobAreServed(t *testing.T) {
	rep := &weir.Report{Rescales: []weir.Rescale{{From: 2, To: 4, Checkpoint: 7, Cause: "requested"}},
		LeaderChanges: []weir.LeaderChange{{Epoch: 2, Adopted: true}}}
	jobs := []Job{clusterJob{name: "a-1", report: rep}, clusterJob{name: "b-2"}}
	s := NewClusterServer(func() []Job { return jobs }, func() cluster.Stats { return cluster.Stats{} })
	var got Changes
	if code, body := get(t, s, "/api/v1/jobs/a-1/changes"); code != 200 || json.Unmarshal([]byte(body), &got) != nil {
		t.Fatalf("/api/v1/jobs/a-1/changes: %d %s", code, body)
	}
	if len(got.Rescales) != 1 || got.Rescales[0].To != 4 || len(got.LeaderChanges) != 1 || !got.LeaderChanges[0].Adopted {
		t.Fatalf("changes %+v, want the report's", got)
	}
	if _, body := get(t, s, "/api/v1/jobs/b-2/changes"); !strings.Contains(body, `"rescales": []`) || !strings.Contains(body, `"leader_changes": []`) {
		t.Fatalf("changes of a job without any: %s", body)
	}
}
