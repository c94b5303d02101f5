package cluster

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/engine"
)

// This file is the cluster's side of savepoints: the Savepoint call asks
// a running job's pipeline for one (weir savepoint, weir stop
// --savepoint), and before a job stops after its savepoint the
// coordinator waits until every worker's sinks committed it
// (AWAIT_COMPLETED, answered by Committed).

// Savepointer is an optional ability of a Pipeline: savepoints of its
// running job (job.Handle has it). Savepoint writes one under dir, with
// stop stops the job after it, and with drain drains the job before it
// and stops it (engine.SavepointRequest); it fails with engine.ErrNotRunning
// if the job does not run and engine.ErrNoSavepoints if it takes no
// checkpoints.
type Savepointer interface {
	Savepoint(ctx context.Context, dir string, stop, drain bool) (engine.SavepointResult, error)
}

// Savepoint has a running job write a savepoint under req.Dir (default
// the coordinator's SavepointDir) and answers where; with req.Stop the
// job then stops once its sinks committed the savepoint, and its state
// becomes Stopped; with req.Drain its sources first emit the final
// watermark before the savepoint's barrier, and it stops as well. It
// blocks until the savepoint is written.
func (c *Coordinator) Savepoint(ctx context.Context, req *pb.SavepointRequest) (*pb.SavepointInfo, error) {
	if c.Deposed() != nil {
		return nil, c.deposedStatus()
	}
	j, err := c.job(req.Id)
	if err != nil {
		return nil, err
	}
	dir := req.Dir
	if dir == "" {
		dir = c.cfg.SavepointDir
	}
	if dir == "" {
		return nil, status.Errorf(codes.InvalidArgument, "no directory for the savepoint: give --dir, or start the coordinator with --savepoint-dir")
	}
	j.mu.Lock()
	state := j.rec.State
	j.mu.Unlock()
	sp, ok := j.p.(Savepointer)
	if (state != Running && state != Waiting) || j.p == nil {
		return nil, status.Errorf(codes.FailedPrecondition, "job %s is %s, not running", j.id, state)
	}
	if !ok {
		return nil, status.Errorf(codes.Unimplemented, "job %s cannot take savepoints", j.id)
	}
	r, err := sp.Savepoint(ctx, dir, req.Stop || req.Drain, req.Drain)
	switch {
	case errors.Is(err, engine.ErrNotRunning):
		return nil, status.Errorf(codes.FailedPrecondition, "job %s is not running", j.id)
	case errors.Is(err, engine.ErrNoSavepoints):
		return nil, status.Errorf(codes.FailedPrecondition, "job %s: %v", j.id, err)
	case ctx.Err() != nil:
		return nil, status.FromContextError(ctx.Err()).Err()
	case err != nil:
		return nil, status.Errorf(codes.Aborted, "job %s: %v", j.id, err)
	}
	c.cfg.Log(fmt.Sprintf("job %s: savepoint of checkpoint %d written to %s", j.id, r.Checkpoint, r.Path))
	return &pb.SavepointInfo{Path: r.Path, Checkpoint: r.Checkpoint, Bytes: r.Bytes, DurationNs: int64(r.Duration)}, nil
}

// AwaitCompleted returns once every share of the attempt answered that
// its sinks handled the completion of checkpoint id (Complete sent it
// before, on the same ordered command stream), or its share ended. It
// returns ctx.Err() if ctx ends first. The engine calls it before it
// stops the job after a savepoint (engine.Committer).
func (x *remoteExecutor) AwaitCompleted(ctx context.Context, id int64) error {
	x.mu.Lock()
	var waits []awaited
	for _, sh := range x.shares {
		if sh.ended || !sh.live {
			continue
		}
		tok, ch := x.tokenLocked()
		if sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{
			Key: sh.key, Kind: pb.Command_AWAIT_COMPLETED, Checkpoint: id, Token: tok}}}) {
			waits = append(waits, awaited{sh, ch})
		}
	}
	x.mu.Unlock()
	for _, a := range waits {
		a.wait(ctx)
	}
	return ctx.Err()
}

var _ engine.Committer = (*remoteExecutor)(nil)

// awaitCompleted answers an AWAIT_COMPLETED command with Committed once
// await (the runtime's AwaitCompleted) returned: the local sinks handled
// the completion of the command's checkpoint. It waits in the
// background: the attempt's commands go on.
func (a *workerAttempt) awaitCompleted(ctx context.Context, await func(context.Context, int64) error, c *pb.Command) {
	a.bg.Add(1)
	go func() {
		defer a.bg.Done()
		if await(ctx, c.Checkpoint) != nil {
			return // the attempt ends; so does the coordinator's wait
		}
		a.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Committed{Committed: &pb.Committed{Key: a.d.Key, Token: c.Token}}})
	}()
}
