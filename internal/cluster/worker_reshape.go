package cluster

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// This file is a worker's side of a live rescale (reshape.go tells the
// coordinator's): a running share prepares for it (RESHAPE), and a
// successor share, deployed with the rescale's checkpoint, starts its
// subtasks once that checkpoint completed (RESHAPE_START).

// changeParallelism sets the parallelism of the tasks in par (vertex ID
// to parallelism) in cfg's plan, as the coordinator's plan has it after
// live rescales.
func (a *workerAttempt) changeParallelism(cfg *engine.Config, par map[int32]int32) error {
	if len(par) == 0 {
		return nil
	}
	changes := map[int]int{}
	for v, n := range par {
		if int(v) < len(cfg.Plan.Vertices) && cfg.Plan.Vertices[v].Parallelism != int(n) {
			changes[int(v)] = int(n)
		}
	}
	if len(changes) == 0 {
		return nil
	}
	p, err := cfg.Plan.WithParallelism(changes)
	if err != nil {
		return fmt.Errorf("job %s at the coordinator's parallelism: %w", a.d.Job, err)
	}
	cfg.Plan = p
	a.reshaped = true
	return nil
}

// prepareReshape readies the share's runtime for the live rescale c
// describes: its senders into the cone will send to the successor shares
// c.Moves names, through this share's endpoint, and its subtasks of the
// cone retire after their snapshot of c.Checkpoint.
func (a *workerAttempt) prepareReshape(rt *task.Runtime, c *pb.Command) error {
	cfg := a.cfg
	if err := a.changeParallelism(&cfg, c.Parallelism); err != nil {
		return err
	}
	where := map[dataflow.SubtaskID]*pb.Placement{}
	for _, pl := range c.Moves {
		where[sid(pl.Subtask)] = pl
	}
	cone := map[int]bool{}
	for _, v := range c.Cone {
		cone[int(v)] = true
	}
	ep := a.ep
	opts := a.opts
	opts.Local = func(dataflow.SubtaskID) bool { return false }
	opts.Remote = func(to dataflow.SubtaskID, ch int) exchange.Sender {
		pl := where[to]
		return ep.SenderTo(pl.GetDataAddr(), pl.GetDataKey(), to.Vertex, to.Subtask, ch)
	}
	// A view of the successors, for the channels into them: it runs
	// nothing here.
	view := task.NewSuccessor(cfg.Plan, opts, c.Checkpoint)
	rt.PrepareReshape(c.Checkpoint, view, cone)
	return nil
}

// startSuccessor restores the successor share's subtasks from the
// checkpoint c names and runs them; done receives the end of their run.
func (a *workerAttempt) startSuccessor(ctx context.Context, rt *task.Runtime, c *pb.Command, done chan<- error) error {
	var m store.Metadata
	if err := json.Unmarshal(c.Restore, &m); err != nil {
		return fmt.Errorf("decoding the checkpoint to restore: %w", err)
	}
	state, err := engine.ReadState(ctx, a.cfg.Store, &m, a.cfg.Plan, a.opts.Local, a.cfg.AllowNonRestoredState)
	if err != nil {
		return err
	}
	rt.SetRestore(state)
	go func() { done <- rt.Run(ctx) }()
	return nil
}
