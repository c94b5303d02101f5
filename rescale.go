package weir

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/engine"
)

// LiveRescale describes a change of parallelism a running pipeline made
// without a restart (Pipeline.Rescale).
type LiveRescale struct {
	// Checkpoint is the aligned checkpoint at which the tasks changed.
	Checkpoint int64 `json:"checkpoint"`
	// Replaced is the number of subtasks that started anew: those of the
	// changed tasks and of every task downstream of them.
	Replaced int `json:"replaced"`
	// Pause runs from the checkpoint's trigger to when the new subtasks
	// had restored their state: the longest any record waited on it
	// (with the state handed over in memory, before the checkpoint
	// completed).
	Pause time.Duration `json:"pause_ns"`
}

// ErrNotLive means the running pipeline cannot change the parallelism
// asked without a restart; the error says why. Stop it with a savepoint
// and restore it at the new parallelism instead (a cluster's weir
// rescale does so by itself).
var ErrNotLive = engine.ErrNotLive

// ErrInvalidRescale means a Rescale request is wrong whatever the
// pipeline's state: it names an operator the pipeline does not have, or
// asks for a parallelism outside 1 to the max parallelism, or for two
// parallelisms of one task. The error says which.
var ErrInvalidRescale = errors.New("invalid rescale")

// invalidRescale is an ErrInvalidRescale with its own message.
type invalidRescale string

func (e invalidRescale) Error() string        { return string(e) }
func (e invalidRescale) Is(target error) bool { return target == ErrInvalidRescale }

// Rescale changes the parallelism of running tasks without a restart.
// parallelism maps an operator, by its uid (UID) or name, to its new
// parallelism; the operator's whole task (the operators chained with it)
// changes. At the next checkpoint, aligned, the changed tasks and every
// task downstream of them take their snapshot and hand over to new
// subtasks at the new parallelism, which take that checkpoint's state by
// key group — in memory at the barrier with the memory state backend,
// else by restoring the checkpoint once it completed; the sources and
// the other tasks upstream run on, their records after the checkpoint
// queued for the new subtasks. Output stays exactly-once. Rescale
// returns once the checkpoint completed and the new subtasks restored
// their state.
//
// It fails with ErrInvalidRescale for a request wrong in itself; with
// ErrNotLive for a source, under fine-grained failover with upstream
// backup or active standbys, and for a task with a forward edge (an
// edge that is not chained, Explain shows them: its ends keep one
// parallelism); with ErrNotRunning when the pipeline does not run; and with the
// checkpoint's failure when it aborts (the pipeline then restarts from
// its latest checkpoint at the old parallelism). It is safe to call from
// any goroutine while Run runs.
func (p *Pipeline) Rescale(ctx context.Context, parallelism map[string]int) (LiveRescale, error) {
	pl, err := p.plan()
	if err != nil {
		return LiveRescale{}, err
	}
	if len(parallelism) == 0 {
		return LiveRescale{}, invalidRescale("no operator to rescale")
	}
	changes := map[int]int{}
	for name, n := range parallelism {
		v, err := pl.TaskOf(name)
		if err != nil {
			return LiveRescale{}, invalidRescale(err.Error())
		}
		if old, ok := changes[v]; ok && old != n {
			return LiveRescale{}, invalidRescale(fmt.Sprintf("task %q is asked for parallelism %d and %d", pl.Vertices[v].Name(), old, n))
		}
		if n < 1 || n > pl.MaxParallelism {
			return LiveRescale{}, invalidRescale(fmt.Sprintf("parallelism %d of %q is out of range [1, %d] (the job's max parallelism)", n, name, pl.MaxParallelism))
		}
		if e := pl.Vertices[v].ForwardEdge(); e != nil && n != pl.Vertices[v].Parallelism {
			return LiveRescale{}, fmt.Errorf("%w: task %q has a forward edge %q -> %q, whose ends keep one parallelism", ErrNotLive, pl.Vertices[v].Name(), e.From.Name, e.To.Name)
		}
		changes[v] = n
	}
	r, err := p.engineRescale(ctx, changes)
	if err != nil {
		return LiveRescale{}, err
	}
	return LiveRescale{Checkpoint: r.Checkpoint, Replaced: r.Replaced, Pause: r.Pause}, nil
}

// engineRescale is Rescale by task (vertex ID), for a cluster's
// coordinator (Engine).
func (p *Pipeline) engineRescale(ctx context.Context, tasks map[int]int) (engine.RescaleResult, error) {
	end := p.runEnd.Load()
	if end == nil || p.Status().State != "running" {
		return engine.RescaleResult{}, ErrNotRunning
	}
	reply := make(chan engine.RescaleResult, 1)
	select {
	case p.rescales <- engine.RescaleRequest{Parallelism: tasks, Reply: reply}:
	case <-*end:
		return engine.RescaleResult{}, ErrNotRunning
	case <-ctx.Done():
		return engine.RescaleResult{}, ctx.Err()
	}
	select {
	case r := <-reply:
		return r, r.Err
	case <-ctx.Done():
		return engine.RescaleResult{}, ctx.Err()
	}
}
