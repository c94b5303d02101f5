package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// This file is a worker's side of restarting single subtasks (see
// restart.go): failures of single subtasks and replay requests go to the
// coordinator; STOP, RESTART, REPLAY and MOVE come from it.

// stallGrace is how long a channel whose connection broke waits for the
// coordinator to restart its sender elsewhere (which severs it) before
// its receiver restarts: longer than a worker's loss takes to detect.
const stallGrace = 10 * time.Second

// restartStalled fails the local receivers of channels whose connection
// broke while their sender lives on: restarted, they ask for replays,
// which reconnect. The input log of an active standby's primary (see
// register) is no such channel: when it breaks the standby holds what
// arrived, and takes over if the primary was lost.
func (a *workerAttempt) restartStalled(rt *task.Runtime, chans [][3]int) {
	for _, s := range stalledReceivers(len(rt.Plan().Vertices), chans) {
		rt.Kill(s.id, fmt.Errorf("the connection of its input channel %d broke while its sender runs on", s.ch))
	}
}

// stalledReceiver is a subtask to fail for a stalled input channel.
type stalledReceiver struct {
	id dataflow.SubtaskID
	ch int // the first of its stalled channels
}

// stalledReceivers returns the subtasks of a plan of vertices vertices
// that restartStalled fails for the stalled channels chans ({vertex,
// subtask, channel}), each once, in the order of chans: the channels of
// vertices past the plan's are active standbys' input logs and fail
// nothing.
func stalledReceivers(vertices int, chans [][3]int) []stalledReceiver {
	var out []stalledReceiver
	seen := map[dataflow.SubtaskID]bool{}
	for _, c := range chans {
		id := dataflow.SubtaskID{Vertex: c[0], Subtask: c[1]}
		if c[0] >= vertices || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, stalledReceiver{id, c[2]})
	}
	return out
}

// upstreamBackup sets the runtime options of a share deployed with
// upstream backup.
func (a *workerAttempt) upstreamBackup(opts *task.Options) {
	d := a.d
	if !d.UpstreamBackup {
		return
	}
	opts.UpstreamBackup, opts.RetainLimit = true, d.RetainLimit
	opts.Log = a.g.w.cfg.Log
	opts.RequestReplay = func(sender dataflow.SubtaskID, q task.ReplayRequest) {
		a.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Replay{Replay: &pb.ReplayRequest{Key: d.Key, Sender: ref(sender),
			Edge: int32(q.Edge), To: int32(q.To), From: q.From, Incarnation: q.Incarnation}}})
	}
	a.activeStandby(opts)
	if d.Rejoin {
		opts.Rejoin, opts.Incarnation = true, d.Incarnation
		opts.Delivered = map[dataflow.Channel]int64{}
		for _, c := range d.Delivered {
			opts.Delivered[dataflow.Channel{Edge: int(c.Edge), From: int(c.From), To: int(c.To)}] = c.N
		}
	}
}

// applyRestart applies the commands of fine-grained failover.
func (a *workerAttempt) applyRestart(ctx context.Context, rt *task.Runtime, c *pb.Command) {
	switch c.Kind {
	case pb.Command_STOP:
		var ids []dataflow.SubtaskID
		for _, r := range c.Subtasks {
			ids = append(ids, sid(r))
		}
		a.stop(rt.Stop, ids, c.Subtasks)
	case pb.Command_RESTART:
		a.bg.Add(1)
		go func() {
			defer a.bg.Done()
			if err := a.restartHere(ctx, rt, c); err != nil && ctx.Err() == nil {
				a.fail(err) // the job falls back to a global rollback (from the checkpoint before, if this one is corrupt)
				return
			}
			a.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Restarted{Restarted: &pb.Restarted{Key: a.d.Key, Token: c.Token}}})
		}()
	case pb.Command_PROMOTE:
		a.promote(ctx, rt, c)
	case pb.Command_SHIP:
		a.ship(ctx, rt, c)
	case pb.Command_AWAIT_COMPLETED:
		a.awaitCompleted(ctx, rt.AwaitCompleted, c)
	case pb.Command_KILL_STANDBY:
		rt.KillStandby(sid(c.Subtask), errors.New(c.Error))
	case pb.Command_REPLAY:
		q := c.Replay
		rt.Replay(sid(q.Sender), task.ReplayRequest{Edge: int(q.Edge), To: int(q.To), From: q.From, Incarnation: q.Incarnation})
	case pb.Command_MOVE:
		moved := &pb.Moved{Key: a.d.Key, Token: c.Token}
		for _, pl := range c.Moves {
			from := sid(pl.Subtask)
			ins := rt.InputsFrom(from)
			chans := make([][3]int, len(ins))
			for i, in := range ins {
				chans[i] = [3]int{in.To.Vertex, in.To.Subtask, in.Gate}
			}
			for i, n := range a.ep.Sever(chans) {
				if n >= 0 {
					ch := ins[i].Channel
					moved.Delivered = append(moved.Delivered, &pb.ChannelCount{Edge: int32(ch.Edge), From: int32(ch.From), To: int32(ch.To), N: n})
				}
			}
			a.place(pl) // for the senders of subtasks that restart here later
			a.ep.Move(from.Vertex, from.Subtask, pl.DataAddr, pl.DataKey)
		}
		a.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Moved{Moved: moved}})
	}
}

// stop stops subtasks ids (refs) with the runtime's Stop and answers the
// STOP command once they stopped, in order with the reports of finished
// subtasks (reportFinished).
func (a *workerAttempt) stop(stop func([]dataflow.SubtaskID), ids []dataflow.SubtaskID, refs []*pb.SubtaskRef) {
	a.finMu.Lock()
	defer a.finMu.Unlock()
	stop(ids)
	a.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Stopped{Stopped: &pb.Stopped{Key: a.d.Key, Subtasks: refs}}})
}

// reportFinished tells the coordinator that subtask id finished its
// input, unless the subtask was stopped since it noted its end: after
// the answer to a STOP command (Stopped) the stopped incarnation's end
// must not reach the coordinator, which would take it for the next
// incarnation's (remoteExecutor.Stop). finMu orders the two.
// finished is the runtime's Finished.
func (a *workerAttempt) reportFinished(finished func(dataflow.SubtaskID) bool, id dataflow.SubtaskID) {
	a.finMu.Lock()
	defer a.finMu.Unlock()
	if finished(id) {
		a.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Finished{Finished: &pb.SubtaskFinished{Key: a.d.Key, Subtask: ref(id)}}})
	}
}

// restartHere restarts failed or stopped local subtasks from the
// checkpoint c names, and waits until they asked for their replays.
func (a *workerAttempt) restartHere(ctx context.Context, rt *task.Runtime, c *pb.Command) error {
	want := map[dataflow.SubtaskID]bool{}
	var ids []dataflow.SubtaskID
	for _, r := range c.Subtasks {
		if id := sid(r); rt.IsLocal(id) {
			want[id] = true
			ids = append(ids, id)
		}
	}
	state := map[dataflow.SubtaskID][]byte{}
	var restored int64
	if len(c.Restore) > 0 {
		var m store.Metadata
		if err := json.Unmarshal(c.Restore, &m); err != nil {
			return fmt.Errorf("decoding the checkpoint to restore: %w", err)
		}
		var err error
		if state, _, err = a.restoreState(ctx, a.cfg, &m, func(id dataflow.SubtaskID) bool { return want[id] }); err != nil {
			return fmt.Errorf("restarting subtasks: %w", err)
		}
		restored = int64(m.ID)
	}
	select {
	case <-rt.Restart(ctx, ids, state, restored, int(c.Attempt)):
		return nil
	case <-ctx.Done():
		return errors.New("the attempt ended")
	}
}
