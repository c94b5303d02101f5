package cluster

import (
	"context"
	"fmt"
	"strings"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/task"
)

// This file is a worker's side of active standby on a cluster (see
// replica.go): a primary's share ships the input logs of its replicated
// subtasks to their standbys; a replica share runs those standbys and
// promotes them when told (PROMOTE).

// activeStandby sets the runtime options of a share deployed with active
// standbys.
func (a *workerAttempt) activeStandby(opts *task.Options) {
	d := a.d
	if !d.ActiveStandby || !d.UpstreamBackup {
		return
	}
	opts.ActiveStandby, opts.Replica, opts.StandbyElsewhere = true, d.Replica, !d.Replica
	opts.OnStandbyStopped = func(id task.SubtaskID, err error) {
		a.s.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Failed{Failed: &pb.SubtaskFailed{Key: d.Key, Subtask: ref(id), Error: err.Error(), Standby: true}}})
	}
}

// shipLogs starts sending the input log of every local replicated
// subtask that has a standby elsewhere, from checkpoint restored's mark,
// on goroutines the attempt waits for.
func (a *workerAttempt) shipLogs(ctx context.Context, rt *task.Runtime, ep *transportEndpoint, restored int64) {
	n := len(rt.Plan().Vertices)
	a.placeMu.Lock()
	defer a.placeMu.Unlock()
	for id, pl := range a.replica {
		if !rt.IsLocal(id) {
			continue
		}
		ship, err := rt.ShipLog(id, restored)
		if err != nil {
			a.s.w.cfg.Log(fmt.Sprintf("attempt %s: subtask %s runs without its active standby: %v", a.d.Key, id, err))
			continue
		}
		to := ep.SenderTo(pl.DataAddr, pl.DataKey, n+id.Vertex, id.Subtask, 0)
		a.bg.Add(1)
		go func() {
			defer a.bg.Done()
			err := ship(ctx, func(e exchange.Element) error {
				_, err := to.SendTimed(ctx, e)
				return err
			})
			if ctx.Err() == nil {
				a.s.w.cfg.Log(fmt.Sprintf("attempt %s: shipping the input log of subtask %s to its active standby stopped: %v", a.d.Key, id, err))
			}
		}()
	}
}

// promote makes the local standbys c names take their subtasks' place,
// and answers once they asked for their replays. A standby that cannot
// fails the share, and so the attempt: the job falls back to a global
// rollback.
func (a *workerAttempt) promote(ctx context.Context, rt *task.Runtime, c *pb.Command) {
	var ids []task.SubtaskID
	var names []string
	for _, r := range c.Subtasks {
		ids = append(ids, sid(r))
		names = append(names, sid(r).String())
	}
	p := task.Promotion{Delivered: map[task.Channel]int64{}, Aborted: c.Checkpoint, Incarnation: int64(c.Attempt) << 20}
	for _, cc := range c.Delivered {
		p.Delivered[task.Channel{Edge: int(cc.Edge), From: int(cc.From), To: int(cc.To)}] = cc.N
	}
	ready, err := rt.Promote(ids, p)
	if err != nil {
		rt.Kill(task.SubtaskID{}, fmt.Errorf("promoting active standbys: %w", err))
		return
	}
	a.bg.Add(1)
	go func() {
		defer a.bg.Done()
		select {
		case <-ready:
		case <-ctx.Done():
			return
		}
		a.s.w.cfg.Log(fmt.Sprintf("attempt %s: the active standbys of subtasks %s took their place", a.d.Key, strings.Join(names, ", ")))
		a.s.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Restarted{Restarted: &pb.Restarted{Key: a.d.Key, Token: c.Token}}})
	}()
}
