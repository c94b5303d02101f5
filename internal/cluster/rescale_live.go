package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/plan"
)

// This file is weir rescale --operator: one operator's task changes
// parallelism while the job runs (a live rescale: reshape.go and
// internal/engine/reshape.go), with no restart. The job's record then
// carries the change (--task-parallelism in its arguments), so that its
// later runs, and a coordinator that takes it over, build the changed
// plan.

// LiveRescaler is the ability of a job's pipeline to change the
// parallelism of tasks while it runs; job.Handle has it.
type LiveRescaler interface {
	RescaleLive(ctx context.Context, tasks map[int]int) (engine.RescaleResult, error)
}

// rescaleLive changes the parallelism of the task that runs operator to
// to, live, and records the change. It pins a job of --parallelism
// auto, as a requested whole-job rescale does.
func (c *Coordinator) rescaleLive(ctx context.Context, j *job, operator string, to int) (*pb.RescaleInfo, error) {
	j.mu.Lock()
	pl := j.plan
	j.mu.Unlock()
	if pl == nil {
		return nil, status.Errorf(codes.FailedPrecondition, "job %s is not running", j.id)
	}
	v, err := pl.TaskOf(operator)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "job %s: %v", j.id, err)
	}
	r, from, err := c.rescaleTasksLive(ctx, j, map[int]int{v: to}, requested)
	if err != nil {
		return nil, err
	}
	return &pb.RescaleInfo{From: int32(from[v]), To: int32(to), Checkpoint: r.Checkpoint, StopNs: int64(r.Pause),
		Live: true, Task: pl.Vertices[v].Name(), Replaced: int32(r.Replaced)}, nil
}

// rescaleTasksLive changes the parallelism of job j's tasks (vertex ID
// to parallelism) while it runs and records the change with its cause.
// It returns the engine's result and the tasks' parallelism before. Its
// errors are gRPC statuses: FailedPrecondition when the run cannot
// rescale live (engine.ErrNotLive) or does not run, Aborted when the
// rescale failed after its checkpoint was triggered.
func (c *Coordinator) rescaleTasksLive(ctx context.Context, j *job, tasks map[int]int, cause string) (engine.RescaleResult, map[int]int, error) {
	j.mu.Lock()
	p, pl, state, busy := j.p, j.plan, j.rec.State, j.handOver
	j.mu.Unlock()
	lr, ok := p.(LiveRescaler)
	switch {
	case busy:
		return engine.RescaleResult{}, nil, status.Errorf(codes.Aborted, "a rescale of job %s is already under way", j.id)
	case state != Running || p == nil || pl == nil:
		return engine.RescaleResult{}, nil, status.Errorf(codes.FailedPrecondition, "job %s is %s, not running", j.id, state)
	case !ok:
		return engine.RescaleResult{}, nil, status.Errorf(codes.Unimplemented, "job %s cannot change parallelism while it runs", j.id)
	}
	c.cfg.Log(fmt.Sprintf("job %s: rescaling %s live", j.id, describeTasks(pl, tasks)))
	r, err := lr.RescaleLive(ctx, tasks)
	switch {
	case err == nil:
	case errors.Is(err, engine.ErrNotLive), errors.Is(err, engine.ErrNotRunning):
		return r, nil, status.Errorf(codes.FailedPrecondition, "job %s: %v", j.id, err)
	case ctx.Err() != nil:
		return r, nil, status.FromContextError(ctx.Err()).Err()
	case r.Checkpoint == 0:
		return r, nil, status.Errorf(codes.InvalidArgument, "job %s: %v", j.id, err)
	default:
		return r, nil, status.Errorf(codes.Aborted, "job %s: %v", j.id, err)
	}
	from := map[int]int{}
	for v := range tasks {
		from[v] = pl.Vertices[v].Parallelism
	}
	if rs := r.Plan; rs != nil {
		at := time.Now().Add(-r.Pause)
		j.mu.Lock()
		for v := range tasks {
			from[v] = j.plan.Vertices[v].Parallelism
		}
		j.plan = rs
		j.rec.Args = withTaskParallelism(j.rec.Args, changedTasks(rs, j.parallelism))
		j.rec.Auto = j.rec.Auto && cause != requested
		j.rec.Rescales = slices.Clone(j.rec.Rescales)
		for _, v := range slices.Sorted(maps.Keys(tasks)) {
			j.rec.Rescales = append(j.rec.Rescales, engine.Rescale{At: at, Task: rs.Vertices[v].Name(),
				Live: true, From: from[v], To: tasks[v], Checkpoint: r.Checkpoint, Cause: cause, Pause: r.Pause})
		}
		j.mu.Unlock()
		if err := c.save(c.ctx, j); err != nil {
			c.cfg.Log(fmt.Sprintf("job %s: %v: a later run starts at the parallelism the record had", j.id, err))
		}
	}
	for _, v := range slices.Sorted(maps.Keys(tasks)) {
		c.cfg.Log(fmt.Sprintf("job %s: rescaled task %q from parallelism %d to %d live at checkpoint %d: %d subtasks replaced, paused %v",
			j.id, pl.Vertices[v].Name(), from[v], tasks[v], r.Checkpoint, r.Replaced, r.Pause.Round(time.Millisecond)))
	}
	return r, from, nil
}

// describeTasks names the tasks of p in tasks with their new
// parallelism.
func describeTasks(p *plan.Plan, tasks map[int]int) string {
	var parts []string
	for _, v := range slices.Sorted(maps.Keys(tasks)) {
		parts = append(parts, fmt.Sprintf("task %q to parallelism %d", p.Vertices[v].Name(), tasks[v]))
	}
	return strings.Join(parts, ", ")
}

// changedTasks returns the tasks of p whose parallelism differs from the
// job's default def, by vertex ID.
func changedTasks(p *plan.Plan, def int) map[int]int {
	out := map[int]int{}
	for _, v := range p.Vertices {
		if v.Parallelism != def {
			out[v.ID] = v.Parallelism
		}
	}
	return out
}

// withTaskParallelism returns job arguments args with their
// --task-parallelism replaced by tasks (none if empty).
func withTaskParallelism(args []string, tasks map[int]int) []string {
	out := withoutTaskParallelism(args)
	if len(tasks) == 0 {
		return out
	}
	return append(out, "--task-parallelism", plan.FormatTaskParallelism(tasks))
}

// withoutTaskParallelism returns args without their --task-parallelism.
func withoutTaskParallelism(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--task-parallelism":
			i++ // and its value
		case strings.HasPrefix(a, "--task-parallelism="):
		default:
			out = append(out, a)
		}
	}
	return out
}
