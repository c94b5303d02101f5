package cluster

import (
	"context"
	"fmt"
	"strings"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/task"
)

// This file is a worker's side of active standby on a cluster (see
// active_standby.go): a primary's share ships the input logs of its
// subtasks that have active standbys to them; a standby share runs those
// standbys and promotes them when told (PROMOTE).

// activeStandby sets the runtime options of a share deployed with active
// standbys.
func (a *workerAttempt) activeStandby(opts *task.Options) {
	d := a.d
	if !d.ActiveStandby || !d.UpstreamBackup {
		return
	}
	opts.ActiveStandby, opts.PrimaryElsewhere, opts.StandbyElsewhere = true, d.StandbyShare, !d.StandbyShare
	opts.Replacement = d.StandbyShare && d.Replacement
}

// shipper is the goroutine that sends one local subtask's input log to
// its standby.
type shipper struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// shipLogs starts sending the input log of every local subtask that
// has a remote standby, from checkpoint restored's mark.
func (a *workerAttempt) shipLogs(ctx context.Context, rt *task.Runtime, ep *transportEndpoint, restored int64) {
	a.placeMu.Lock()
	var pls []*pb.Placement
	for id, pl := range a.standbyAt {
		if rt.IsLocal(id) {
			pls = append(pls, pl)
		}
	}
	a.placeMu.Unlock()
	for _, pl := range pls {
		a.shipLog(ctx, rt, ep, pl, restored)
	}
}

// ship starts shipping the logs of the local subtasks c.Moves names to
// their new standbys (SHIP), from checkpoint c.Checkpoint's mark.
func (a *workerAttempt) ship(ctx context.Context, rt *task.Runtime, c *pb.Command) {
	for _, pl := range c.Moves {
		if !rt.IsLocal(sid(pl.Subtask)) {
			continue
		}
		a.place(pl)
		a.shipLog(ctx, rt, a.ep, pl, c.Checkpoint)
	}
}

// shipLog sends the input log of the local subtask pl names to its
// standby where pl says, from checkpoint cp's mark on, on a goroutine the
// attempt waits for. It first stops the shipper to an earlier standby
// and waits for it: a log has one reader. A log that does not reach back
// to cp stops the standby (it reports that, and the coordinator tries
// again from a later checkpoint). Called from the attempt's run
// goroutine only.
func (a *workerAttempt) shipLog(ctx context.Context, rt *task.Runtime, ep *transportEndpoint, pl *pb.Placement, cp int64) {
	id := sid(pl.Subtask)
	if old := a.shippers[id]; old != nil {
		old.cancel()
		<-old.done
	}
	to := ep.SenderTo(pl.DataAddr, pl.DataKey, len(rt.Plan().Vertices)+id.Vertex, id.Subtask, 0)
	ship, err := rt.ShipLog(id, cp)
	sctx, cancel := context.WithCancel(ctx)
	sh := &shipper{cancel: cancel, done: make(chan struct{})}
	a.shippers[id] = sh
	a.bg.Add(1)
	go func() {
		defer a.bg.Done()
		defer close(sh.done)
		defer cancel()
		if err != nil {
			a.g.w.cfg.Log(fmt.Sprintf("attempt %s: subtask %s runs without its active standby: %v", a.d.Key, id, err))
			_, _ = to.SendTimed(sctx, task.LogLost())
			return
		}
		err := ship(sctx, func(e exchange.Element) error {
			_, err := to.SendTimed(sctx, e)
			return err
		})
		if sctx.Err() == nil {
			a.g.w.cfg.Log(fmt.Sprintf("attempt %s: shipping the input log of subtask %s to its active standby stopped: %v", a.d.Key, id, err))
		}
	}()
}

// promote makes the local standbys c names take their subtasks' place,
// and answers once they asked for their replays. A standby that cannot
// fails the share, and so the attempt: the job falls back to a global
// rollback.
func (a *workerAttempt) promote(ctx context.Context, rt *task.Runtime, c *pb.Command) {
	var ids []dataflow.SubtaskID
	var names []string
	for _, r := range c.Subtasks {
		ids = append(ids, sid(r))
		names = append(names, sid(r).String())
	}
	p := task.Promotion{Delivered: map[dataflow.Channel]int64{}, Aborted: c.Checkpoint, Incarnation: int64(c.Attempt) << 20}
	for _, cc := range c.Delivered {
		p.Delivered[dataflow.Channel{Edge: int(cc.Edge), From: int(cc.From), To: int(cc.To)}] = cc.N
	}
	ready, err := rt.Promote(ids, p)
	if err != nil {
		a.fail(fmt.Errorf("promoting active standbys: %w", err))
		return
	}
	a.bg.Add(1)
	go func() {
		defer a.bg.Done()
		select {
		case <-ready:
		case <-ctx.Done():
			select {
			case <-ready: // promoted, and the share ended at once (its input had ended): still an answer
			default:
				return
			}
		}
		a.g.w.cfg.Log(fmt.Sprintf("attempt %s: the active standbys of subtasks %s took their place", a.d.Key, strings.Join(names, ", ")))
		a.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Restarted{Restarted: &pb.Restarted{Key: a.d.Key, Token: c.Token}}})
	}()
}
