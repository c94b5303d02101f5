package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/plan"
)

// This file changes a running job's parallelism (weir rescale): the job
// stops at a checkpoint, as weir stop --savepoint stops it but without
// the copy into a savepoint (the checkpoint stays in the job's own
// store, engine.SavepointRequest with no Dir), its sinks commit that
// checkpoint, and the coordinator starts the job again under the same id
// with its --parallelism changed, restoring the checkpoint (state moves
// by key group, internal/task/rescale.go). The job's record stays; it
// lists the rescale (engine.Rescale), with the pause from the trigger
// of the stop's checkpoint to the first record written after. It is a
// restart of the whole job at a checkpoint, not a live hand-over of key
// groups.

// Rescale changes a running job's parallelism and answers once the job
// started again at the new one (see the proto for its refusals).
func (c *Coordinator) Rescale(ctx context.Context, req *pb.RescaleRequest) (*pb.RescaleInfo, error) {
	if c.Deposed() != nil {
		return nil, c.deposedStatus()
	}
	j, err := c.job(req.Id)
	if err != nil {
		return nil, err
	}
	if req.Operator != "" {
		return c.rescaleLive(ctx, j, req.Operator, int(req.Parallelism))
	}
	r, err := c.rescale(ctx, j, int(req.Parallelism), requested)
	if err != nil {
		return nil, err
	}
	return &pb.RescaleInfo{From: int32(r.From), To: int32(r.To), Checkpoint: r.Checkpoint, StopNs: int64(r.stopped)}, nil
}

// requested is the cause of a rescale the Rescale call asked for. It
// pins a job of --parallelism auto: the job no longer follows the
// workers.
const requested = "requested"

// rescaled is a rescale carried out, with the time its stop took.
type rescaled struct {
	engine.Rescale
	stopped time.Duration
}

// rescale stops job j at a checkpoint and starts it again at parallelism
// to from that checkpoint; cause goes into the record. It refuses (with
// a gRPC status) what the Rescale call refuses. The client's ctx bounds
// only the checks and the wait: once the stop is asked for, the rescale
// goes on under the coordinator's context, so a job is never left
// stopped because its client went away.
func (c *Coordinator) rescale(ctx context.Context, j *job, to int, cause string) (rescaled, error) {
	sp, err := c.beginRescale(j, to)
	if err != nil {
		return rescaled{}, err
	}
	type result struct {
		r   rescaled
		err error
	}
	res := make(chan result, 1)
	c.jobsWG.Add(1)
	go func() {
		defer c.jobsWG.Done()
		r, err := c.stopAndRestart(j, sp, to, cause)
		res <- result{r, err}
	}()
	select {
	case r := <-res:
		return r.r, r.err
	case <-ctx.Done():
		return rescaled{}, status.FromContextError(ctx.Err()).Err()
	}
}

// beginRescale checks that job j may rescale to parallelism to and marks
// the rescale under way.
func (c *Coordinator) beginRescale(j *job, to int) (Savepointer, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	sp, ok := j.p.(Savepointer)
	switch {
	case j.handOver:
		return nil, status.Errorf(codes.Aborted, "a rescale of job %s is already under way", j.id)
	case j.rec.State != Running || j.p == nil:
		return nil, status.Errorf(codes.FailedPrecondition, "job %s is %s, not running", j.id, j.rec.State)
	case !ok:
		return nil, status.Errorf(codes.Unimplemented, "job %s cannot stop at a checkpoint", j.id)
	case to < 1 || to > j.maxParallelism:
		return nil, status.Errorf(codes.InvalidArgument, "parallelism %d is outside 1..%d (the job's --max-parallelism)", to, j.maxParallelism)
	case j.runsAtLocked(to):
		return nil, status.Errorf(codes.FailedPrecondition, "job %s already runs at parallelism %d", j.id, to)
	}
	held := 0
	for x := range j.executors {
		held += x.slotsHeld()
	}
	c.mu.Lock()
	_, free := c.freeSlotsLocked(false)
	c.mu.Unlock()
	if to > free+held {
		return nil, status.Errorf(codes.ResourceExhausted, "job %s needs %d slots at parallelism %d: it holds %d and %d more are free", j.id, to, to, held, free)
	}
	j.handOver = true
	return sp, nil
}

// stopAndRestart stops j at a checkpoint and starts its next run at
// parallelism to from it. Should the stop fail, j runs on; should the
// run end otherwise than stopped (it failed for good meanwhile), its end
// is recorded as without a rescale.
func (c *Coordinator) stopAndRestart(j *job, sp Savepointer, to int, cause string) (rescaled, error) {
	at := time.Now()
	from := j.width()
	c.cfg.Log(fmt.Sprintf("job %s: rescaling from parallelism %d to %d: stopping at a checkpoint", j.id, from, to))
	r, err := sp.Savepoint(c.ctx, "", true, false)
	if err != nil {
		j.giveUpHandOver()
		if errors.Is(err, engine.ErrNotRunning) || errors.Is(err, engine.ErrNoSavepoints) {
			return rescaled{}, status.Errorf(codes.FailedPrecondition, "job %s: %v", j.id, err)
		}
		return rescaled{}, status.Errorf(codes.Aborted, "job %s: the stop for the rescale failed, the job runs on: %v", j.id, err)
	}
	return c.restart(j, engine.Rescale{At: at, From: from, To: to, Checkpoint: r.Checkpoint, Cause: cause}, true)
}

// restart waits for the end of j's run, which a rescale ended (stopped
// at checkpoint rs.Checkpoint; stopped false: cancelled, to restart from
// its latest checkpoint), and starts the job's next run at parallelism
// rs.To, restoring the job's latest checkpoint.
func (c *Coordinator) restart(j *job, rs engine.Rescale, stopped bool) (rescaled, error) {
	select {
	case <-j.done:
	case <-c.ctx.Done():
		return rescaled{}, status.Error(codes.Unavailable, "the coordinator stopped")
	}
	if c.ctx.Err() != nil {
		return rescaled{}, status.Error(codes.Unavailable, "the coordinator stopped")
	}
	j.mu.Lock()
	runErr := j.runErr
	j.mu.Unlock()
	if stopped && (runErr != nil || !stoppedBySavepoint(j.p)) {
		j.recordEnd(runErr, errors.Is(runErr, context.Canceled)) // weir cancel meanwhile, say
		return rescaled{}, status.Errorf(codes.Aborted, "job %s ended before its rescale: %v", j.id, runErr)
	}
	if !stopped && runErr == nil { // it finished before the cancel
		j.recordEnd(nil, false)
		return rescaled{}, status.Errorf(codes.Aborted, "job %s ended before its rescale", j.id)
	}
	if r := j.p.Report(); r != nil {
		if !stopped {
			rs.Checkpoint = cmp.Or(r.LastCompleted(), r.Restored)
		}
		for _, ck := range r.Checkpoints {
			if stopped && ck.ID == rs.Checkpoint && !ck.Triggered.IsZero() {
				rs.At = ck.Triggered // the pause runs from the stop's trigger
			}
		}
	}
	j.cancel()
	j.mu.Lock()
	rec := j.rec
	j.mu.Unlock()
	// A whole job's parallelism overrides what live rescales set for its
	// tasks.
	rec.Args = withParallelism(withoutTaskParallelism(rec.Args), rs.To)
	rec.Auto = rec.Auto && rs.Cause != requested
	rec.Rescales = append(slices.Clone(rec.Rescales), rs)
	nj, err := c.start(c.ctx, rec, true, false)
	if err != nil {
		j.recordEnd(fmt.Errorf("starting the job again at parallelism %d: %w", rs.To, err), false)
		return rescaled{}, status.Errorf(codes.Internal, "job %s stopped for the rescale but did not start again: %v", j.id, err)
	}
	c.cfg.Log(fmt.Sprintf("job %s: rescaled from parallelism %d to %d, restoring checkpoint %d", j.id, rs.From, rs.To, rs.Checkpoint))
	c.jobsWG.Add(1)
	go func() {
		defer c.jobsWG.Done()
		c.measurePause(nj, rs.At)
	}()
	return rescaled{rs, time.Since(rs.At)}, nil
}

// giveUpHandOver ends a rescale that did not stop j's run: the run goes
// on, or if it ended meanwhile (it failed for good, so the stop failed),
// its end, which its goroutine left to the rescale, is recorded now.
func (j *job) giveUpHandOver() {
	j.mu.Lock()
	j.handOver = false
	ended, err := j.ended, j.runErr
	j.mu.Unlock()
	if ended {
		j.recordEnd(err, errors.Is(err, context.Canceled))
	}
}

// measurePause waits for the first record the sinks of job j's run
// write, as the workers timed it and reported it in their heartbeats,
// and records the pause of its latest rescale: from at to then. It gives
// up when the run ends.
func (c *Coordinator) measurePause(j *job, at time.Time) {
	tick := time.NewTicker(max(time.Millisecond, c.cfg.HeartbeatInterval/4))
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-j.done:
			return
		case <-c.ctx.Done():
			return
		}
		var first time.Time
		j.mu.Lock()
		for x := range j.executors {
			if t := x.FirstOutput(); !t.IsZero() && (first.IsZero() || t.Before(first)) {
				first = t
			}
		}
		j.mu.Unlock()
		if first.IsZero() {
			continue
		}
		pause := first.Sub(at)
		j.mu.Lock()
		rs := slices.Clone(j.rec.Rescales)
		rs[len(rs)-1].Pause = pause
		j.rec.Rescales = rs
		j.mu.Unlock()
		c.cfg.Log(fmt.Sprintf("job %s: first record written %v after the rescale's stop", j.id, pause.Round(time.Millisecond)))
		if err := c.save(c.ctx, j); err != nil {
			c.cfg.Log(fmt.Sprintf("recording the rescale of job %s: %v", j.id, err))
		}
		return
	}
}

// slotsHeld counts the slots the attempt holds.
func (x *remoteExecutor) slotsHeld() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := 0
	for _, sh := range x.shares {
		n += x.slotsOnLocked(sh)
	}
	return n
}

// parallelismOf is a plan's parallelism: its widest vertex's, the slots
// an attempt of it takes.
func parallelismOf(p *plan.Plan) int {
	n := 0
	for _, v := range p.Vertices {
		n = max(n, v.Parallelism)
	}
	return n
}

// withParallelism returns job arguments args with their parallelism
// (--parallelism N, -p N, in any of the flag forms) replaced by n.
func withParallelism(args []string, n int) []string {
	out := withoutParallelism(args)
	return append(out, "--parallelism", strconv.Itoa(n))
}

// withoutParallelism returns args without their parallelism flags.
func withoutParallelism(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--parallelism" || a == "-p":
			i++ // and its value
		case strings.HasPrefix(a, "--parallelism=") || strings.HasPrefix(a, "-p"):
		default:
			out = append(out, a)
		}
	}
	return out
}

// parallelismArg returns the value of the parallelism flag in args, or
// "" if none; the last one counts, as in flag parsing.
func parallelismArg(args []string) string {
	v := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case (a == "--parallelism" || a == "-p") && i+1 < len(args):
			v = args[i+1]
			i++
		case strings.HasPrefix(a, "--parallelism="):
			v = strings.TrimPrefix(a, "--parallelism=")
		case strings.HasPrefix(a, "-p="):
			v = strings.TrimPrefix(a, "-p=")
		case strings.HasPrefix(a, "-p") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			v = a[2:]
		}
	}
	return v
}
