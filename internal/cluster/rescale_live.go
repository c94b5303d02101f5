package cluster

import (
	"context"
	"errors"
	"fmt"
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
// to, live, and records the change.
func (c *Coordinator) rescaleLive(ctx context.Context, j *job, operator string, to int) (*pb.RescaleInfo, error) {
	j.mu.Lock()
	p, pl, state, busy := j.p, j.plan, j.rec.State, j.handOver
	j.mu.Unlock()
	lr, ok := p.(LiveRescaler)
	switch {
	case busy:
		return nil, status.Errorf(codes.Aborted, "a rescale of job %s is already under way", j.id)
	case state != Running || p == nil || pl == nil:
		return nil, status.Errorf(codes.FailedPrecondition, "job %s is %s, not running", j.id, state)
	case !ok:
		return nil, status.Errorf(codes.Unimplemented, "job %s cannot change parallelism while it runs", j.id)
	}
	v, err := pl.TaskOf(operator)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "job %s: %v", j.id, err)
	}
	c.cfg.Log(fmt.Sprintf("job %s: rescaling task %q to parallelism %d live", j.id, pl.Vertices[v].Name(), to))
	r, err := lr.RescaleLive(ctx, map[int]int{v: to})
	switch {
	case err == nil:
	case errors.Is(err, engine.ErrNotLive), errors.Is(err, engine.ErrNotRunning):
		return nil, status.Errorf(codes.FailedPrecondition, "job %s: %v", j.id, err)
	case ctx.Err() != nil:
		return nil, status.FromContextError(ctx.Err()).Err()
	case r.Checkpoint == 0:
		return nil, status.Errorf(codes.InvalidArgument, "job %s: %v", j.id, err)
	default:
		return nil, status.Errorf(codes.Aborted, "job %s: %v", j.id, err)
	}
	from := pl.Vertices[v].Parallelism
	if rs := r.Plan; rs != nil {
		j.mu.Lock()
		from = j.plan.Vertices[v].Parallelism
		j.plan = rs
		j.rec.Args = withTaskParallelism(j.rec.Args, changedTasks(rs, j.parallelism))
		j.rec.Rescales = append(slices.Clone(j.rec.Rescales), engine.Rescale{At: time.Now().Add(-r.Pause), Task: rs.Vertices[v].Name(),
			Live: true, From: from, To: to, Checkpoint: r.Checkpoint, Cause: requested, Pause: r.Pause})
		j.mu.Unlock()
		if err := c.save(c.ctx, j); err != nil {
			c.cfg.Log(fmt.Sprintf("job %s: %v: a later run starts at the parallelism the record had", j.id, err))
		}
	}
	c.cfg.Log(fmt.Sprintf("job %s: rescaled task %q from parallelism %d to %d live at checkpoint %d: %d subtasks replaced, paused %v",
		j.id, pl.Vertices[v].Name(), from, to, r.Checkpoint, r.Replaced, r.Pause.Round(time.Millisecond)))
	return &pb.RescaleInfo{From: int32(from), To: int32(to), Checkpoint: r.Checkpoint, StopNs: int64(r.Pause),
		Live: true, Task: pl.Vertices[v].Name(), Replaced: int32(r.Replaced)}, nil
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
