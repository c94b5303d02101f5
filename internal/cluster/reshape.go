package cluster

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// This file is the coordinator's side of a live rescale on a cluster
// (engine.Reshaper; the engine's side is internal/engine/reshape.go, the
// runtime's internal/task/reshape.go). The subtasks of the rescale's cone
// at the new parallelism run in successor shares, one per worker that
// runs some of them, under keys of their own:
//
//  1. PrepareReshape deploys the successor shares, which build the plan at
//     the new parallelism and register their endpoints but start nothing
//     (Deploy.reshape_at), and tells every running share (RESHAPE) where
//     they run: their senders into the cone send what follows the
//     checkpoint's barrier there, and their subtasks of the cone retire
//     after its snapshot. Slot i of the new subtasks is the worker of slot
//     i where the attempt has one, or a free slot.
//  2. Once the checkpoint completed, StartReshape starts the successor
//     shares from it (RESHAPE_START); each answers once its subtasks
//     restored their state.
//
// A share whose subtasks all retired ends as a finished one does.

// pendingReshape is a live rescale prepared and not yet started.
type pendingReshape struct {
	at     int64
	plan   *plan.Plan
	shares []*share
	where  map[dataflow.SubtaskID]*share
}

var _ engine.Reshaper = (*remoteExecutor)(nil)

// PrepareReshape deploys the successor shares of a live rescale at
// checkpoint at, which runs plan p's cone, and prepares the running
// shares for it. The successors read their state from the store once
// the checkpoint completed: no state passes in memory between workers.
//
// It returns once every running share answered that it is prepared: the
// checkpoint's barrier, which the engine triggers next, must not reach a
// subtask of the cone, or a sender into it, that does not know of the
// rescale (commands to different workers, and to different shares of
// one worker, are not ordered with the data plane). A share that does
// not answer within the heartbeat timeout fails the attempt: some shares
// may have prepared.
func (x *remoteExecutor) PrepareReshape(at int64, p *plan.Plan, cone map[int]bool) (<-chan struct{}, error) {
	waits, err := x.prepareReshape(at, p, cone)
	if err != nil {
		return nil, err
	}
	timeout := time.NewTimer(max(x.c.cfg.HeartbeatTimeout, time.Second))
	defer timeout.Stop()
	for _, ch := range waits {
		select {
		case <-ch:
		case <-x.halted:
			return nil, errors.New("the attempt ended")
		case <-timeout.C:
			err := fmt.Errorf("the running shares did not all prepare for the live rescale at checkpoint %d in time", at)
			x.post(endEvent{err: err})
			return nil, err
		}
	}
	return nil, nil
}

func (x *remoteExecutor) prepareReshape(at int64, p *plan.Plan, cone map[int]bool) ([]chan *pb.Moved, error) {
	o := x.spec.Options
	if o.UpstreamBackup || o.ActiveStandby {
		return nil, fmt.Errorf("%w: its upstream backup and standbys know only the channels they started with", engine.ErrNotLive)
	}
	var cut []dataflow.SubtaskID // the cone's subtasks at the new parallelism
	for _, v := range p.Vertices {
		if cone[v.ID] {
			for i := range v.Parallelism {
				cut = append(cut, dataflow.SubtaskID{Vertex: v.ID, Subtask: i})
			}
		}
	}
	x.mu.Lock()
	if x.failed || x.closed || x.reshape != nil {
		x.mu.Unlock()
		return nil, errors.New("the attempt cannot take a rescale now")
	}
	slot := map[int]*workerConn{}
	for id, sh := range x.where {
		if slot[id.Subtask] == nil && !sh.lost {
			slot[id.Subtask] = sh.w
		}
	}
	var missing []int
	for _, id := range cut {
		if slot[id.Subtask] == nil && !slices.Contains(missing, id.Subtask) {
			missing = append(missing, id.Subtask)
		}
	}
	x.mu.Unlock()

	c := x.c
	c.mu.Lock()
	ws, free := c.freeSlotsLocked(false)
	if free < len(missing) {
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: the new parallelism needs %d more slots and %d are free", engine.ErrNotLive, len(missing), free)
	}
	taken := placeLocked(ws, len(missing))
	for k, i := range missing {
		slot[i] = taken[k]
	}
	x.reshapes++
	key := fmt.Sprintf("%s/r%d", x.key, x.reshapes)
	rs := &pendingReshape{at: at, plan: p, where: map[dataflow.SubtaskID]*share{}}
	byWorker := map[*workerConn]*share{}
	for _, id := range cut {
		w := slot[id.Subtask]
		sh := byWorker[w]
		if sh == nil {
			sh = &share{key: key, w: w, done: make(chan struct{}), successor: true}
			byWorker[w] = sh
			rs.shares = append(rs.shares, sh)
			c.executors[key] = x
		}
		rs.where[id] = sh
	}
	for _, w := range taken {
		byWorker[w].extraSlots++
	}
	c.mu.Unlock()

	x.mu.Lock()
	defer x.mu.Unlock()
	if x.failed || x.closed {
		return nil, errors.New("the attempt ended")
	}
	// The running shares keep their slots' count: a slot a retired subtask
	// held stays the attempt's until it ends.
	for _, sh := range x.shares {
		sh.fixSlots(x.slotsOnLocked(sh))
	}
	x.shares = append(x.shares, rs.shares...)
	x.reshape = rs
	var moves []*pb.Placement
	for id, sh := range rs.where {
		moves = append(moves, &pb.Placement{Subtask: ref(id), DataAddr: sh.w.dataAddr, DataKey: sh.key})
	}
	par := taskParallelism(p)
	coneIDs := slices.Sorted(maps.Keys(cone))
	var cones []int32
	for _, v := range coneIDs {
		cones = append(cones, int32(v))
	}
	// Where the subtasks run once the successors run, without standbys.
	where := maps.Clone(x.where)
	maps.Copy(where, rs.where)
	placement := placementRuns(where, false)
	handover := task.CanHandOver(x.spec.Options, p, cone)
	for _, sh := range rs.shares {
		d, err := x.deployMessage(sh, placement, nil)
		if err != nil {
			return nil, err
		}
		d.Key, d.Subtasks = sh.key, nil
		for id, s := range rs.where {
			if s == sh {
				d.Subtasks = append(d.Subtasks, ref(id))
			}
		}
		d.Parallelism, d.ReshapeAt, d.Cone = par, at, cones
		if handover && x.allOldOnLocked(rs, sh, p) {
			d.ReshapeFrom = map[int32]int32{}
			for _, v := range coneIDs {
				d.ReshapeFrom[int32(v)] = int32(x.plan.Vertices[v].Parallelism)
			}
		}
		if !sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Deploy{Deploy: d}}) {
			return nil, fmt.Errorf("deploying the rescaled tasks on worker %s: the worker is gone", sh.w.id)
		}
	}
	var waits []chan *pb.Moved
	for _, sh := range x.shares {
		if sh.ended || !sh.live { // the new successors are not live yet
			continue
		}
		token, ch := x.tokenLocked()
		waits = append(waits, ch)
		sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{
			Key: sh.key, Kind: pb.Command_RESHAPE, Checkpoint: at, Moves: moves, Parallelism: par, Cone: cones, Token: token}}})
	}
	return waits, nil
}

// allOldOnLocked reports whether every old subtask whose state the
// subtasks of successor share sh of rs take runs on sh's worker, so that
// they can take it in memory (task.TakesFrom); x.mu is held.
func (x *remoteExecutor) allOldOnLocked(rs *pendingReshape, sh *share, p *plan.Plan) bool {
	for id, s := range rs.where {
		if s != sh {
			continue
		}
		v := p.Vertices[id.Vertex]
		for _, i := range task.TakesFrom(v, p.MaxParallelism, x.plan.Vertices[v.ID].Parallelism, id.Subtask) {
			if old := x.where[dataflow.SubtaskID{Vertex: v.ID, Subtask: i}]; old == nil || old.w != sh.w || old.lost {
				return false
			}
		}
	}
	return true
}

// StartReshape starts the prepared successor shares from checkpoint m.
func (x *remoteExecutor) StartReshape(m *store.Metadata) (<-chan struct{}, error) {
	x.mu.Lock()
	rs := x.reshape
	if rs == nil || x.failed || x.closed {
		x.mu.Unlock()
		return nil, errors.New("no rescale is prepared")
	}
	// Each successor share gets the state its subtasks take.
	ids := map[*share][]dataflow.SubtaskID{}
	for id, sh := range rs.where {
		ids[sh] = append(ids[sh], id)
	}
	restores := map[*share][]byte{}
	for _, sh := range rs.shares {
		restore, err := shareRestore(m, rs.plan, x.cfg.AllowNonRestoredState, ids[sh])
		if err != nil {
			x.mu.Unlock()
			return nil, fmt.Errorf("encoding the checkpoint to restore: %w", err)
		}
		restores[sh] = restore
	}
	x.reshape = nil
	maps.Copy(x.where, rs.where)
	for id := range x.where {
		if v := id.Vertex; v < len(rs.plan.Vertices) && id.Subtask >= rs.plan.Vertices[v].Parallelism {
			delete(x.where, id) // a subtask the lower parallelism ended
		}
	}
	x.plan = rs.plan
	var waits []chan *pb.Moved
	for _, sh := range rs.shares {
		sh.live = true
		token, ch := x.tokenLocked()
		waits = append(waits, ch)
		sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{
			Key: sh.key, Kind: pb.Command_RESHAPE_START, Restore: restores[sh], Token: token}}})
	}
	x.mu.Unlock()
	done := make(chan struct{})
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		for _, ch := range waits {
			select {
			case <-ch:
			case <-x.halted:
				return
			}
		}
		close(done)
	}()
	return done, nil
}

// taskParallelism returns each task's parallelism in p, by vertex ID.
func taskParallelism(p *plan.Plan) map[int32]int32 {
	out := map[int32]int32{}
	for _, v := range p.Vertices {
		out[int32(v.ID)] = int32(v.Parallelism)
	}
	return out
}

// fixSlots freezes the share's count of slots at n: a live rescale moves
// its subtasks of the cone elsewhere, while the slots stay taken.
func (sh *share) fixSlots(n int) {
	if !sh.slotsFixed {
		sh.slotsFixed, sh.fixedSlots = true, n
	}
}
