package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli/internal/web"
	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
)

// The dashboard, metrics and JSON API of a cluster's jobs: the web
// server of weir run, shown jobs that the coordinator describes. The
// coordinator serves every job (weir coordinator --http), weir submit
// --http the one it submitted, read through the control plane.

// coordinatorAPI is what the dashboard asks of a coordinator: a
// *cluster.Coordinator in its own process, a client of its control plane
// elsewhere (remoteCoordinator).
type coordinatorAPI interface {
	ListJobs(context.Context, *pb.ListJobsRequest) (*pb.ListJobsResponse, error)
	GetJob(context.Context, *pb.GetJobRequest) (*pb.JobInfo, error)
	Savepoint(context.Context, *pb.SavepointRequest) (*pb.SavepointInfo, error)
}

// remoteCoordinator is a coordinatorAPI over the control plane: each
// call goes to the coordinator that leads among the client's when it is
// made, so the dashboard follows a takeover.
type remoteCoordinator struct{ c *client }

func (r remoteCoordinator) ListJobs(ctx context.Context, req *pb.ListJobsRequest) (out *pb.ListJobsResponse, err error) {
	err = r.c.callWithin(ctx, askTimeout, func(ctx context.Context, cc pb.CoordinatorClient) (err error) {
		out, err = cc.ListJobs(ctx, req)
		return err
	})
	return out, err
}

func (r remoteCoordinator) GetJob(ctx context.Context, req *pb.GetJobRequest) (out *pb.JobInfo, err error) {
	err = r.c.callWithin(ctx, askTimeout, func(ctx context.Context, cc pb.CoordinatorClient) (err error) {
		out, err = cc.GetJob(ctx, req)
		return err
	})
	return out, err
}

// Savepoint answers the coordinator's refusal as its status, unwrapped
// from the client's context, for clusterJob.TakeSavepoint.
func (r remoteCoordinator) Savepoint(ctx context.Context, req *pb.SavepointRequest) (out *pb.SavepointInfo, err error) {
	var refusal error
	err = r.c.callWithin(ctx, savepointTimeout, func(ctx context.Context, cc pb.CoordinatorClient) error {
		out, refusal = cc.Savepoint(ctx, req)
		return refusal
	})
	if refusal != nil {
		return nil, refusal
	}
	return out, err
}

// askTimeout bounds one question to the coordinator for a web request.
const askTimeout = 10 * time.Second

// clusterJobs returns the jobs of the coordinator api, asked at each
// web request; a question the coordinator does not answer is logged and
// shows no jobs.
func clusterJobs(api coordinatorAPI, logf func(string)) func() []web.Job {
	return func() []web.Job {
		ctx, cancel := context.WithTimeout(context.Background(), askTimeout)
		defer cancel()
		r, err := api.ListJobs(ctx, &pb.ListJobsRequest{})
		if err != nil {
			logf(fmt.Sprintf("dashboard: listing the jobs: %v", err))
			return nil
		}
		out := make([]web.Job, len(r.Jobs))
		for i, info := range r.Jobs {
			out[i] = clusterJob{api, info}
		}
		return out
	}
}

// clusterJobByID returns the job whose id is *id, asked of the
// coordinator api at each web request; none while id is empty. As
// clusterJobs.
func clusterJobByID(api coordinatorAPI, id *atomic.Pointer[string], logf func(string)) func() []web.Job {
	return func() []web.Job {
		name := id.Load()
		if name == nil {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), askTimeout)
		defer cancel()
		info, err := api.GetJob(ctx, &pb.GetJobRequest{Id: *name})
		if err != nil {
			logf(fmt.Sprintf("dashboard: asking for job %s: %v", *name, err))
			return nil
		}
		return []web.Job{clusterJob{api, info}}
	}
}

// clusterJob is a web.Job of a cluster: what the coordinator said of it
// (info) when the web request began, and savepoints taken through the
// coordinator's Savepoint call.
type clusterJob struct {
	api  coordinatorAPI
	info *pb.JobInfo
}

var _ web.SavepointTaker = clusterJob{}

// Name is the job's id on the cluster.
func (j clusterJob) Name() string { return j.info.Id }

// Status says the job's state, from its submission (Started) to its end.
func (j clusterJob) Status() weir.JobStatus {
	s := weir.JobStatus{State: j.info.State, Error: j.info.Error, Guarantee: j.info.Guarantee, Failover: j.info.Failover,
		Started: time.UnixMilli(j.info.SubmittedUnixMs)}
	if j.info.EndedUnixMs != 0 {
		s.Ended = time.UnixMilli(j.info.EndedUnixMs)
	}
	return s
}

// Metrics returns the counters of the running attempt's tasks from the
// workers' latest heartbeats; nil while no attempt runs.
func (j clusterJob) Metrics() []weir.TaskMetrics {
	if len(j.info.Subtasks) == 0 {
		return nil
	}
	counts := map[dataflow.SubtaskID]*pb.SubtaskCounts{}
	for _, c := range j.info.Subtasks {
		counts[dataflow.SubtaskID{Vertex: int(c.Subtask.GetVertex()), Subtask: int(c.Subtask.GetSubtask())}] = c
	}
	out := make([]weir.TaskMetrics, len(j.info.Tasks))
	for i, t := range j.info.Tasks {
		m := weir.TaskMetrics{Name: t.Name, Parallelism: int(t.Parallelism), Source: t.Source, Sink: t.Sink, Watermark: weir.EndOfTime}
		for s := range int(t.Parallelism) {
			m.Add(subtaskMetrics(counts[dataflow.SubtaskID{Vertex: int(t.Vertex), Subtask: s}]))
		}
		out[i] = m
	}
	return out
}

// subtaskMetrics converts what a worker reported of a subtask (nil:
// nothing, it is not placed).
func subtaskMetrics(c *pb.SubtaskCounts) weir.SubtaskMetrics {
	if c == nil || !c.Reported {
		return weir.SubtaskMetrics{Watermark: weir.MinWatermark, Worker: c.GetWorkerId()}
	}
	return weir.SubtaskMetrics{RecordsIn: c.RecordsIn, RecordsOut: c.RecordsOut, BytesOut: c.BytesOut,
		RecordsWritten: c.RecordsWritten, LateDropped: c.LateDropped, Watermark: c.Watermark, QueueFill: c.QueueFill,
		Latency: histogramOf(c.Latency), EventTimeLatency: histogramOf(c.EventTimeLatency),
		Idle: time.Duration(c.IdleNs), Backpressured: time.Duration(c.BackpressuredNs), Busy: time.Duration(c.BusyNs),
		WatermarkHeldBackBy: c.WatermarkHeldBackBy, Worker: c.WorkerId}
}

func histogramOf(h *pb.LatencyHistogram) weir.Histogram {
	return weir.Histogram{Counts: h.GetCounts(), Sum: time.Duration(h.GetSumNs())}
}

// Report returns the job's checkpoints and recoveries; nil before its
// run has any.
func (j clusterJob) Report() *weir.Report {
	if len(j.info.Report) == 0 {
		return nil
	}
	var r weir.Report
	if json.Unmarshal(j.info.Report, &r) != nil {
		return nil
	}
	return &r
}

// Explain returns the job's plan as weir run JOB --explain prints it.
func (j clusterJob) Explain() (string, error) { return j.info.Plan, nil }

// TakeSavepoint asks the coordinator for the savepoint req describes.
// The coordinator's refusals keep their message and map to the web
// server's errors: a job not running (or without checkpoints) to
// weir.ErrNotRunning, an unknown one to web.ErrNoSavepointJob, a missing
// directory to web.ErrNoSavepointDir.
func (j clusterJob) TakeSavepoint(ctx context.Context, req web.SavepointRequest) (weir.Savepoint, error) {
	sp, err := j.api.Savepoint(ctx, &pb.SavepointRequest{Id: j.info.Id, Dir: req.Dir, Stop: req.Stop || req.Drain, Drain: req.Drain})
	if err != nil {
		s, _ := status.FromError(err)
		var is error
		switch s.Code() {
		case codes.FailedPrecondition:
			is = weir.ErrNotRunning
		case codes.NotFound:
			is = web.ErrNoSavepointJob
		case codes.InvalidArgument:
			is = web.ErrNoSavepointDir
		}
		return weir.Savepoint{}, coordinatorRefusal{s.Message(), is}
	}
	return weir.Savepoint{Path: sp.Path, Checkpoint: sp.Checkpoint, Bytes: sp.Bytes, Duration: time.Duration(sp.DurationNs)}, nil
}

// coordinatorRefusal is the coordinator's message, matching the web
// server's error of the same meaning (errors.Is) if there is one.
type coordinatorRefusal struct {
	msg string
	is  error
}

func (e coordinatorRefusal) Error() string { return e.msg }
func (e coordinatorRefusal) Unwrap() error { return e.is }

// serveSubmitted serves, on addr, the dashboard, metrics and API of the
// job weir submit submits, read from the coordinator that c calls, until
// the returned stop is called. It serves before the job is submitted, so
// that an address it cannot listen on refuses the command before the job
// runs: show(id) names the job once it has its id.
func serveSubmitted(ctx context.Context, c *client, addr string, stderr io.Writer) (show func(id string), stop func(), err error) {
	api := remoteCoordinator{c}
	logf := func(line string) { fmt.Fprintf(stderr, "weir: %s\n", line) }
	var id atomic.Pointer[string]
	url, stopHTTP, err := web.NewClusterServer(clusterJobByID(api, &id, logf), nil).Start(ctx, addr)
	if err != nil {
		return nil, nil, usagef("--http: %v", err)
	}
	show = func(job string) {
		id.Store(&job)
		fmt.Fprintf(stderr, "weir: dashboard of job %s at %s/, metrics at %s/metrics, API at %s/api/v1/jobs\n", job, url, url, url)
	}
	return show, stopHTTP, nil
}

// serveCoordinator serves, on addr, the dashboard, metrics and API of
// every job of the coordinator current returns, and its own metrics,
// until the returned stop is called. While current returns nil (between
// two coordinators of one process, weir coordinator --ha) it serves no
// jobs.
func serveCoordinator(ctx context.Context, current func() *cluster.Coordinator, addr, savepointDir string, stderr io.Writer) (stop func(), err error) {
	logf := logTo(stderr, "coordinator")
	jobs := func() []web.Job {
		if c := current(); c != nil {
			return clusterJobs(c, logf)()
		}
		return nil
	}
	stats := func() cluster.Stats {
		if c := current(); c != nil {
			return c.Stats()
		}
		return cluster.Stats{}
	}
	srv := web.NewClusterServer(jobs, stats)
	srv.DefaultSavepointDir = savepointDir
	url, stop, err := srv.Start(ctx, addr)
	if err != nil {
		return nil, usagef("--http: %v", err)
	}
	fmt.Fprintf(stderr, "weir coordinator: dashboard at %s/, metrics at %s/metrics, API at %s/api/v1/jobs\n", url, url, url)
	return stop, nil
}
