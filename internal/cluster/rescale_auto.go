package cluster

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/plan"
)

// This file is reactive scaling: a job submitted with --parallelism auto
// starts at the slots that are free and follows the slots the workers
// have. When workers join, it rescales up once no worker joined or left
// for the coordinator's AutoRescaleDelay, so that several joins in a row
// make one rescale: live where it can (rescale_live.go: every task but
// its sources takes the new slots while the job runs), otherwise by a
// restart at a checkpoint (rescale.go). When workers leave, its run is
// failing over anyway, and rather than wait for replacements it starts
// again at the slots that remain from its latest checkpoint, every task
// at that parallelism.

// autoParallelism turns the parallelism "auto" in rec's arguments into
// the free slots (at least 1, at most the job's max parallelism) and
// marks rec Auto. Other arguments are left alone.
func (c *Coordinator) autoParallelism(ctx context.Context, rec *jobRecord) error {
	if parallelismArg(rec.Args) != "auto" {
		return nil
	}
	if c.cfg.Program == nil {
		return status.Errorf(codes.NotFound, "unknown job %q", rec.Job)
	}
	// The plan's max parallelism, from the job built at parallelism 1.
	p, err := c.cfg.Program.Open(ctx, rec.Job, rec.ID, withParallelism(rec.Args, 1))
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "job %s: %v", rec.Job, err)
	}
	cfg, err := p.Compile(ctx)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "job %s: %v", rec.Job, err)
	}
	c.mu.Lock()
	_, free := c.freeSlotsLocked(false)
	c.mu.Unlock()
	n := min(max(free, 1), cfg.Plan.MaxParallelism)
	c.cfg.Log(fmt.Sprintf("job %s: parallelism auto: %d (%d slots free)", rec.ID, n, free))
	rec.Args = withParallelism(rec.Args, n)
	rec.Auto = true
	return nil
}

// slotsFor returns the parallelism job j would have if it took every
// slot not taken by another job: the free slots and its own, at least 1
// and at most its max parallelism.
func (c *Coordinator) slotsFor(j *job) int {
	j.mu.Lock()
	held := 0
	for x := range j.executors {
		held += x.slotsHeld()
	}
	j.mu.Unlock()
	c.mu.Lock()
	_, free := c.freeSlotsLocked(false)
	c.mu.Unlock()
	return min(max(free+held, 1), j.maxParallelism)
}

// followSlots starts the goroutine that rescales job j's run, of a job
// with --parallelism auto, to the slots there are when workers join or
// leave. It ends with ctx (the run's) or once it handed the job over to
// its next run, which has a follower of its own.
func (c *Coordinator) followSlots(ctx context.Context, j *job) {
	c.jobsWG.Add(1)
	go func() {
		defer c.jobsWG.Done()
		settle := c.cfg.AutoRescaleDelay
		if settle <= 0 {
			settle = 2 * time.Second
		}
		for {
			c.mu.Lock()
			changed := c.changed
			c.mu.Unlock()
			if !c.following(j) {
				return // pinned by a requested rescale
			}
			if c.slotsFor(j) != j.width() {
				if !c.settle(ctx, j, settle) {
					return
				}
				if to := c.slotsFor(j); to != j.width() && c.autoRescale(j, to) {
					return
				}
				continue // refused (the run was not running yet), or live: look again
			}
			select {
			case <-changed:
			case <-j.done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
}

// settle waits until the workers did not change for d. It reports false
// if ctx or j's run ended first.
func (c *Coordinator) settle(ctx context.Context, j *job, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		c.mu.Lock()
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
			t.Reset(d)
		case <-t.C:
			return true
		case <-j.done:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// following reports whether job j still follows the workers' slots: a
// requested rescale pins it.
func (c *Coordinator) following(j *job) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.rec.Auto
}

// width returns the slots job j's run takes: its plan's widest task, or
// the job's parallelism before its plan is known.
func (j *job) width() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.widthLocked()
}

// widthLocked is width with j.mu held.
func (j *job) widthLocked() int {
	if j.plan == nil {
		return j.parallelism
	}
	return parallelismOf(j.plan)
}

// runsAtLocked reports whether every task of job j runs at parallelism
// n; j.mu is held.
func (j *job) runsAtLocked(n int) bool {
	if j.plan == nil {
		return j.parallelism == n
	}
	for _, v := range j.plan.Vertices {
		if v.Parallelism != n {
			return false
		}
	}
	return true
}

// autoRescale moves job j to parallelism to: up by a live rescale of the
// tasks that can change while the job runs, or else by a restart at a
// checkpoint; down by a restart from its latest checkpoint. It reports
// whether j's run was handed over (whether or not its next run started):
// not after a live rescale, whose run goes on.
func (c *Coordinator) autoRescale(j *job, to int) bool {
	from := j.width()
	if to > from {
		cause := fmt.Sprintf("workers joined: %d slots for the job", to)
		if tasks := liveScalable(j, to); len(tasks) > 0 {
			_, _, err := c.rescaleTasksLive(c.ctx, j, tasks, cause)
			if err == nil {
				return false
			}
			if status.Code(err) != codes.FailedPrecondition {
				// Under way, or failed after its checkpoint (the run
				// fails over): the follower looks again.
				c.cfg.Log(fmt.Sprintf("job %s: no live rescale to parallelism %d: %v", j.id, to, status.Convert(err).Message()))
				return false
			}
			c.cfg.Log(fmt.Sprintf("job %s: no live rescale to parallelism %d (%v): rescaling by a restart", j.id, to, status.Convert(err).Message()))
		}
		_, err := c.rescale(c.ctx, j, to, cause)
		if err != nil {
			c.cfg.Log(fmt.Sprintf("job %s: no rescale to parallelism %d: %v", j.id, to, status.Convert(err).Message()))
		}
		switch status.Code(err) {
		case codes.FailedPrecondition, codes.Aborted, codes.ResourceExhausted:
			// Refused (the run does not run yet, say) or its stop failed:
			// the job runs on, and its follower looks again.
			j.mu.Lock()
			defer j.mu.Unlock()
			return j.handOver
		}
		return true
	}
	j.mu.Lock()
	if j.handOver || (j.rec.State != Running && j.rec.State != Waiting) {
		j.mu.Unlock()
		return false
	}
	j.handOver = true
	j.mu.Unlock()
	c.cfg.Log(fmt.Sprintf("job %s: workers left, %d slots for the job: restarting at parallelism %d from its latest checkpoint", j.id, to, to))
	j.cancel()
	cause := fmt.Sprintf("workers left: %d slots for the job", to)
	if _, err := c.restart(j, engine.Rescale{At: time.Now(), From: from, To: to, Cause: cause}, false); err != nil {
		c.cfg.Log(fmt.Sprintf("job %s: %v", j.id, status.Convert(err).Message()))
	}
	return true
}

// liveScalable returns the tasks of job j's running plan that a live
// rescale to parallelism to would change: every task below it but its
// sources (whose positions move only at a restart) and the tasks with a
// forward edge (whose ends keep one parallelism). None if the job would
// gain nothing: when its sources are the widest tasks, say.
func liveScalable(j *job, to int) map[int]int {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.plan == nil {
		return nil
	}
	tasks := map[int]int{}
	for _, v := range j.plan.Vertices {
		if v.Head().Kind != plan.Source && v.ForwardEdge() == nil && v.Parallelism < to {
			tasks[v.ID] = to
		}
	}
	return tasks
}
