package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

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
	rt.PrepareReshapeTo(c.Checkpoint, view, a.localSuccessor(c.Checkpoint), cone)
	return nil
}

// expectHandOver readies successor runtime rt to take its state in
// memory from the retiring subtasks on this worker, when the coordinator
// found that they hold all of it (Deploy.reshape_from) and the job keeps
// its state in memory; it reports whether rt does.
func (a *workerAttempt) expectHandOver(rt *task.Runtime) (bool, error) {
	d := a.d
	if len(d.ReshapeFrom) == 0 || a.opts.State != nil {
		return false, nil
	}
	from := map[int]int{}
	cone := map[int]bool{}
	for v, n := range d.ReshapeFrom {
		from[int(v)], cone[int(v)] = int(n), true
	}
	if !task.CanHandOver(a.opts, a.cfg.Plan, cone) {
		return false, nil
	}
	old, err := a.cfg.Plan.WithParallelism(from)
	if err != nil {
		return false, fmt.Errorf("the plan before the rescale: %w", err)
	}
	rt.ExpectHandOver(old)
	return true, nil
}

// tookOver tells the running shares of this worker that the successor
// share's runtime exists (or never will): see localSuccessor.
func (a *workerAttempt) tookOver() {
	a.takeOnce.Do(func() { close(a.takes) })
}

// localSuccessor returns the runtime of the successor share of this
// worker's attempt that takes the state of the live rescale at
// checkpoint at in memory, once it exists; nil if there is none. The
// coordinator deploys successor shares before it tells running shares of
// the rescale, so the share is known here by the time RESHAPE comes.
func (a *workerAttempt) localSuccessor(at int64) *task.Runtime {
	base := attemptBase(a.d.Key)
	var s *workerAttempt
	a.g.mu.Lock()
	for _, o := range a.g.attempts {
		if o.takes != nil && o.d.ReshapeAt == at && attemptBase(o.d.Key) == base {
			s = o
		}
	}
	a.g.mu.Unlock()
	if s == nil {
		return nil
	}
	select {
	case <-s.takes:
	case <-a.g.ctx.Done():
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rt == nil || !s.rt.ExpectsHandOver() {
		return nil
	}
	return s.rt
}

// reshapeNumber returns N of a successor share's key "KEY/rN", 0 for
// another share's.
func reshapeNumber(key string) int {
	if base := attemptBase(key); base != key {
		n, _ := strconv.Atoi(key[len(base)+2:])
		return n
	}
	return 0
}

// attemptBase returns the key of the attempt a share's key belongs to:
// without the suffix "/rN" of a live rescale's successor shares.
func attemptBase(key string) string {
	if i := strings.LastIndex(key, "/r"); i >= 0 && i+2 < len(key) && strings.Trim(key[i+2:], "0123456789") == "" {
		return key[:i]
	}
	return key
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
