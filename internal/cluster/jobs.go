package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/plan"
)

// Job states.
const (
	Waiting   = "waiting"
	Running   = "running"
	Finished  = "finished"
	Failed    = "failed"
	Cancelled = "cancelled"
	// Stopped is a job that stopped after a savepoint (weir stop
	// --savepoint).
	Stopped = "stopped"
)

// jobRecord is what the coordinator keeps of a job in the store, so that a
// coordinator restarted on the same store resumes it.
type jobRecord struct {
	ID        string    `json:"id"`
	Job       string    `json:"job"`
	Args      []string  `json:"args"`
	State     string    `json:"state"`
	Error     string    `json:"error,omitempty"`
	Submitted time.Time `json:"submitted"`
	Ended     time.Time `json:"ended,omitzero"`
	// Auto marks a job submitted with --parallelism auto, which follows
	// the slots the workers have (rescale_auto.go); Args hold the
	// parallelism it runs at now.
	Auto bool `json:"auto,omitempty"`
	// Rescales lists the job's changes of parallelism (rescale.go).
	Rescales []engine.Rescale `json:"rescales,omitempty"`
	// LeaderChanges lists the coordinators that resumed the job (adopt.go).
	LeaderChanges []engine.LeaderChange `json:"leader_changes,omitempty"`
}

const jobsPrefix = "cluster/jobs/"

// job is a submitted job.
type job struct {
	c      *Coordinator
	id     string
	job    string
	args   []string
	p      Pipeline
	cancel context.CancelFunc

	mu        sync.Mutex
	rec       jobRecord
	detail    string
	executors map[*remoteExecutor]bool // the running attempts (one per region under fine-grained failover)
	guarantee string
	failover  string
	// adopted holds the running shares the job adopts, until its run's
	// first attempt took them (adopt.go); resumed is when this
	// coordinator resumed the job.
	adopted *adoption
	resumed time.Time

	// Rescaling (rescale.go): parallelism and maxParallelism are the
	// run's; done is closed when its run ended (ended, with runErr);
	// handOver is set while a rescale ends the run, which then records
	// no end.
	parallelism, maxParallelism int
	done                        chan struct{}
	ended                       bool
	runErr                      error
	handOver                    bool
	plan                        *plan.Plan // nil for a job that ended before this coordinator started
}

// setDetail says what the job waits for ("" once it runs), and logs it
// when it changes.
func (j *job) setDetail(d string) {
	j.mu.Lock()
	changed := d != j.detail
	j.detail = d
	if d != "" && j.rec.State == Running {
		j.rec.State = Waiting
	} else if d == "" && j.rec.State == Waiting {
		j.rec.State = Running
	}
	j.mu.Unlock()
	if changed && d != "" {
		j.c.cfg.Log(fmt.Sprintf("job %s %s", j.id, d))
	}
}

func (j *job) setPlacement(x *remoteExecutor) {
	j.mu.Lock()
	if j.executors == nil {
		j.executors = map[*remoteExecutor]bool{}
	}
	j.executors[x] = true
	j.mu.Unlock()
}

func (j *job) dropExecutor(x *remoteExecutor) {
	j.mu.Lock()
	delete(j.executors, x)
	j.mu.Unlock()
}

// Submit starts a job.
func (c *Coordinator) Submit(ctx context.Context, req *pb.SubmitRequest) (*pb.JobInfo, error) {
	if c.Deposed() != nil {
		return nil, c.deposedStatus()
	}
	c.mu.Lock()
	c.lastJob++
	id := fmt.Sprintf("%s-%d", req.Job, c.lastJob)
	c.mu.Unlock()
	rec := jobRecord{ID: id, Job: req.Job, Args: req.Args, State: Running, Submitted: time.Now()}
	if err := c.autoParallelism(ctx, &rec); err != nil { // --parallelism auto (rescale_auto.go)
		return nil, err
	}
	j, err := c.start(ctx, rec, false, false)
	if err != nil {
		return nil, err
	}
	return j.info(), nil
}

// start builds and runs a job; resume restores its latest checkpoint,
// and adopt first waits for the workers' reports of the attempt an
// earlier coordinator left running, to adopt it (adopt.go).
func (c *Coordinator) start(ctx context.Context, rec jobRecord, resume, adopt bool) (*job, error) {
	if c.cfg.Program == nil || !slices.Contains(c.cfg.Program.Jobs(), rec.Job) {
		return nil, status.Errorf(codes.NotFound, "unknown job %q", rec.Job)
	}
	args := slices.Clone(rec.Args)
	if !hasFlag(args, "state-dir") {
		args = append(args, "--state-dir", c.cfg.Store)
	}
	if resume {
		// A job submitted with --restore (a savepoint, say) that took
		// checkpoints of its own resumes from its latest: restoring what it
		// was submitted with again would repeat its work since.
		own := withoutFlag(args, "restore")
		if ok, err := c.hasCheckpoint(ctx, own, rec); err != nil {
			return nil, err
		} else if ok {
			args = append(own, "--restore", "latest")
		}
	}
	p, err := c.cfg.Program.Open(ctx, rec.Job, rec.ID, args)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "job %s: %v", rec.Job, err)
	}
	cfg, err := p.Compile(ctx)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "job %s: %v", rec.Job, err)
	}
	if cfg.Mode == engine.AtMostOnce {
		return nil, status.Errorf(codes.InvalidArgument, "job %s: at-most-once is not supported in cluster mode yet; use exactly-once, at-least-once or none", rec.Job)
	}
	jctx, cancel := context.WithCancel(c.ctx)
	j := &job{c: c, id: rec.ID, job: rec.Job, args: args, p: p, cancel: cancel, rec: rec,
		guarantee: cfg.Mode.String(), failover: cfg.Failover.String(),
		parallelism: parallelismOf(cfg.Plan), maxParallelism: cfg.Plan.MaxParallelism, done: make(chan struct{}),
		plan: cfg.Plan}
	if err := c.save(ctx, j); err != nil {
		cancel()
		return nil, err
	}
	c.mu.Lock()
	c.jobs[j.id] = j
	if adopt {
		c.adopting[j.id] = true // before any worker reports its attempts
		j.resumed = time.Now()
	}
	c.mu.Unlock()
	c.cfg.Log(fmt.Sprintf("job %s started", j.id))
	deploy := c.deployer(j, cfg)
	if rec.Auto {
		c.followSlots(jctx, j) // rescale_auto.go
	}
	c.jobsWG.Add(1)
	go func() {
		defer c.jobsWG.Done()
		defer close(j.done)
		var adoption *engine.Adoption
		if adopt {
			a, err := c.awaitAdoption(jctx, j, cfg.Plan)
			if err != nil {
				return // the coordinator stops, or the job was cancelled before it ran
			}
			if a != nil {
				adoption = &engine.Adoption{LastTrigger: a.lastTrigger}
			}
			c.noteLeaderChange(j, a)
		}
		err := p.Run(jctx, deploy, leaderFence{c}, adoption)
		j.mu.Lock()
		j.ended, j.runErr = true, err
		handOver := j.handOver
		j.mu.Unlock()
		// If the coordinator stops, the job stays running in the store; if
		// a rescale ended the run, the rescale waits for done and starts the
		// job's next run itself (rescale.go). Neither records an end.
		if c.ctx.Err() != nil || handOver {
			return
		}
		j.recordEnd(err, jctx.Err() != nil)
	}()
	return j, nil
}

// recordEnd records the end of the job's run, which returned err
// (cancelled: its context was cancelled), and saves the record.
func (j *job) recordEnd(err error, cancelled bool) {
	j.mu.Lock()
	j.rec.Ended = time.Now()
	switch {
	case err == nil && stoppedBySavepoint(j.p):
		j.rec.State = Stopped
	case err == nil:
		j.rec.State = Finished
	case cancelled:
		j.rec.State = Cancelled
	default:
		j.rec.State, j.rec.Error = Failed, err.Error()
	}
	j.detail = ""
	state, why := j.rec.State, j.rec.Error
	j.mu.Unlock()
	if why != "" {
		state += ": " + why
	}
	j.c.cfg.Log(fmt.Sprintf("job %s %s", j.id, state))
	if err := j.c.save(context.Background(), j); err != nil {
		j.c.cfg.Log(fmt.Sprintf("recording the end of job %s: %v", j.id, err))
	}
}

// stoppedBySavepoint reports whether p's run ended because a savepoint
// asked it to.
func stoppedBySavepoint(p Pipeline) bool {
	r := p.Report()
	return r != nil && r.Stopped
}

// hasCheckpoint reports whether the job has a completed checkpoint to
// resume from.
func (c *Coordinator) hasCheckpoint(ctx context.Context, args []string, rec jobRecord) (bool, error) {
	p, err := c.cfg.Program.Open(ctx, rec.Job, rec.ID, args)
	if err != nil {
		return false, err
	}
	cfg, err := p.Compile(ctx)
	if err != nil || cfg.Store == nil {
		return false, err
	}
	ids, err := cfg.Store.Committed(ctx, rec.ID)
	return len(ids) > 0, err
}

// withoutFlag returns args without flag name and its value (--name V or
// --name=V).
func withoutFlag(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--"+name:
			i++ // and its value
		case strings.HasPrefix(a, "--"+name+"="):
		default:
			out = append(out, a)
		}
	}
	return out
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--"+name || strings.HasPrefix(a, "--"+name+"=") {
			return true
		}
	}
	return false
}

// save writes the job's record, if the coordinator still leads.
func (c *Coordinator) save(ctx context.Context, j *job) error {
	j.mu.Lock()
	b, err := json.Marshal(j.rec)
	j.mu.Unlock()
	if err != nil {
		return err
	}
	if err := (leaderFence{c}).Check(ctx); err != nil {
		return fmt.Errorf("recording job %s: %w", j.id, err)
	}
	if err := c.blobs.Put(ctx, jobsPrefix+j.id, b); err != nil {
		return fmt.Errorf("recording job %s: %w", j.id, err)
	}
	return nil
}

// resume restarts the jobs an earlier coordinator left running.
func (c *Coordinator) resume(ctx context.Context) error {
	keys, err := c.blobs.List(ctx, jobsPrefix)
	if err != nil {
		return fmt.Errorf("listing jobs in the store: %w", err)
	}
	for _, k := range keys {
		b, err := c.blobs.Get(ctx, k)
		if err != nil {
			return fmt.Errorf("reading job record %s: %w", k, err)
		}
		var rec jobRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return fmt.Errorf("job record %s is corrupt: %w", k, err)
		}
		if i := strings.LastIndexByte(rec.ID, '-'); i >= 0 {
			if n, err := strconv.Atoi(rec.ID[i+1:]); err == nil && n > c.lastJob {
				c.lastJob = n
			}
		}
		if rec.State != Running && rec.State != Waiting {
			j := &job{c: c, id: rec.ID, job: rec.Job, args: rec.Args, rec: rec, cancel: func() {}}
			c.jobs[j.id] = j
			continue
		}
		c.cfg.Log(fmt.Sprintf("resuming job %s", rec.ID))
		if _, err := c.start(ctx, rec, true, true); err != nil {
			return fmt.Errorf("resuming job %s: %w", rec.ID, err)
		}
	}
	return nil
}

// ListJobs lists every job the coordinator knows.
func (c *Coordinator) ListJobs(context.Context, *pb.ListJobsRequest) (*pb.ListJobsResponse, error) {
	c.mu.Lock()
	jobs := make([]*job, 0, len(c.jobs))
	for _, j := range c.jobs {
		jobs = append(jobs, j)
	}
	c.mu.Unlock()
	out := &pb.ListJobsResponse{}
	for _, j := range jobs {
		out.Jobs = append(out.Jobs, j.info())
	}
	slices.SortFunc(out.Jobs, func(a, b *pb.JobInfo) int { return int(a.SubmittedUnixMs - b.SubmittedUnixMs) })
	return out, nil
}

// GetJob describes one job.
func (c *Coordinator) GetJob(_ context.Context, req *pb.GetJobRequest) (*pb.JobInfo, error) {
	j, err := c.job(req.Id)
	if err != nil {
		return nil, err
	}
	return j.info(), nil
}

// CancelJob cancels a job and returns its state.
func (c *Coordinator) CancelJob(_ context.Context, req *pb.GetJobRequest) (*pb.JobInfo, error) {
	j, err := c.job(req.Id)
	if err != nil {
		return nil, err
	}
	j.cancel()
	return j.info(), nil
}

func (c *Coordinator) job(id string) (*job, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	j := c.jobs[id]
	if j == nil {
		return nil, status.Errorf(codes.NotFound, "no job %q", id)
	}
	return j, nil
}

func (j *job) info() *pb.JobInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	in := &pb.JobInfo{Id: j.id, Job: j.job, Args: j.rec.Args, State: j.rec.State, Error: j.rec.Error, Detail: j.detail,
		SubmittedUnixMs: j.rec.Submitted.UnixMilli(), Guarantee: j.guarantee, Failover: j.failover}
	if !j.rec.Ended.IsZero() {
		in.EndedUnixMs = j.rec.Ended.UnixMilli()
	}
	if j.p != nil {
		if r := j.p.Report(); r != nil {
			r.Rescales = j.rec.Rescales // the record keeps them across runs
			r.LeaderChanges = j.rec.LeaderChanges
			in.Report, _ = json.Marshal(r)
		}
	}
	placement := map[string][]dataflow.SubtaskID{}
	for x := range j.executors {
		r, w := x.counts()
		in.RecordsRead += r
		in.RecordsWritten += w
		in.Subtasks = append(in.Subtasks, x.subtaskCounts()...)
		for w, ids := range x.placement() {
			placement[w] = append(placement[w], ids...)
		}
	}
	for w, ids := range placement {
		wt := &pb.WorkerTasks{WorkerId: w}
		for _, id := range ids {
			wt.Subtasks = append(wt.Subtasks, ref(id))
		}
		in.Workers = append(in.Workers, wt)
	}
	in.Plan, in.Tasks = planInfo(j.plan)
	slices.SortFunc(in.Workers, func(a, b *pb.WorkerTasks) int { return strings.Compare(a.WorkerId, b.WorkerId) })
	slices.SortFunc(in.Subtasks, func(a, b *pb.SubtaskCounts) int {
		return cmp.Or(cmp.Compare(a.Subtask.GetVertex(), b.Subtask.GetVertex()), cmp.Compare(a.Subtask.GetSubtask(), b.Subtask.GetSubtask()))
	})
	return in
}
