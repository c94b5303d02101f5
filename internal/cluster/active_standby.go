package cluster

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// This file is the coordinator's side of active standby on a cluster
// (task/standby_remote.go): every subtask that can have one
// (task.CanHaveStandby) gets a remote standby on another worker, passive
// standby workers first, then those with the most free slots, in a share
// of its own (a standby share) that takes no slot. The primary's worker
// ships the primary's input log to it. When the primary's worker is lost,
// the standby takes its place (PROMOTE) instead of a restart from the
// checkpoint: the other shares point their channels to it as for a moved
// subtask (MOVE), and it asks for replays from what it consumed.
//
// A standby that stopped (its primary restarted, its log outgrew the
// retain limit) or whose worker was lost is replaced when the next
// checkpoint completes (replaceStandbys): a new standby share restores
// the subtask's state of that checkpoint, and the primary's worker ships
// the log from that checkpoint's mark (SHIP). A standby that took its
// primary's place logs its own input from its next snapshot on, and so
// gets a standby of its own the same way.

// placeAllStandbysLocked places a standby of every subtask that can have
// one on a worker other than its primary's, and returns the new standby
// shares.
// The caller holds the coordinator's mu.
func (x *remoteExecutor) placeAllStandbysLocked(ws []*workerConn) []*share {
	x.standbyAt = map[dataflow.SubtaskID]*share{}
	var ids []dataflow.SubtaskID
	for _, v := range x.plan.Vertices {
		if !task.CanHaveStandby(v) {
			continue
		}
		for i := range v.Parallelism {
			if id := (dataflow.SubtaskID{Vertex: v.ID, Subtask: i}); x.where[id] != nil {
				ids = append(ids, id)
			}
		}
	}
	return x.placeStandbysLocked(ws, ids, "")
}

// placeStandbysLocked places a standby of each of ids on a worker of ws
// other than its primary's, passive standby workers first, then those with
// the most free slots, then those with the fewest standbys placed, in new
// standby shares, and returns them. The caller holds the coordinator's mu
// (and the executor's, but for the first placement).
func (x *remoteExecutor) placeStandbysLocked(ws []*workerConn, ids []dataflow.SubtaskID, again string) []*share {
	placed := map[*workerConn]int{} // standbys placed, by worker
	better := func(a, b *workerConn) bool {
		if a.passive != b.passive {
			return a.passive
		}
		if fa, fb := a.slots-a.used, b.slots-b.used; fa != fb {
			return fa > fb
		}
		if placed[a] != placed[b] {
			return placed[a] < placed[b]
		}
		return a.id < b.id
	}
	byWorker := map[*workerConn]*share{}
	var fresh []*share
	var none []string
	for _, id := range ids {
		primary := x.where[id]
		var w *workerConn
		for _, c := range ws {
			if c != primary.w && (w == nil || better(c, w)) {
				w = c
			}
		}
		if w == nil {
			none = append(none, id.String())
			continue
		}
		placed[w]++
		sh := byWorker[w]
		if sh == nil {
			x.standbyShares++
			sh = &share{key: fmt.Sprintf("%s/a%d", x.key, x.standbyShares), w: w, done: make(chan struct{}), live: true, standbys: true}
			byWorker[w] = sh
			fresh = append(fresh, sh)
			x.shares = append(x.shares, sh)
		}
		x.standbyAt[id] = sh
	}
	if len(none) > 0 && again == "" {
		x.c.cfg.Log(fmt.Sprintf("job %s: no other worker for the active standbys of subtasks %s", x.job.id, strings.Join(none, ", ")))
	}
	for _, sh := range fresh {
		var names []string
		for id, s := range x.standbyAt {
			if s == sh {
				names = append(names, id.String())
			}
		}
		slices.Sort(names)
		x.c.cfg.Log(fmt.Sprintf("job %s: active standbys of subtasks %s on worker %s%s", x.job.id, strings.Join(names, ", "), sh.w.id, again))
	}
	return fresh
}

// replaceStandbys starts new standbys, from completed checkpoint m, of the
// subtasks whose standby stopped or was lost, where their primaries run in
// shares that ship logs and have not finished: each checkpoint's acks say
// the primaries run, and their logs hold m's mark.
func (x *remoteExecutor) replaceStandbys(m *store.Metadata) {
	if !x.spec.Options.ActiveStandby || x.standbyAt == nil || m == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.failed || x.closed {
		return
	}
	var ids []dataflow.SubtaskID
	for _, v := range x.plan.Vertices {
		if !task.CanHaveStandby(v) {
			continue
		}
		for i := range v.Parallelism {
			id := dataflow.SubtaskID{Vertex: v.ID, Subtask: i}
			p, sb := x.where[id], x.standbyAt[id]
			// A promoted standby (in its standby share) logs and ships as
			// its primary did.
			if p == nil || !p.ships && !p.standbys || p.ended || p.lost || !p.live || x.finished[id] || sb != nil && !sb.ended && !sb.lost {
				continue
			}
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	x.c.mu.Lock()
	fresh := x.placeStandbysLocked(x.c.workersLocked(), ids, fmt.Sprintf(" again, from checkpoint %d", m.ID))
	for _, sh := range fresh {
		x.c.executors[sh.key] = x
	}
	x.c.mu.Unlock()
	placement := x.placementLocked()
	for _, sh := range fresh {
		d, err := x.deployMessage(sh, placement, m)
		if err != nil {
			x.c.cfg.Log(fmt.Sprintf("job %s: not replacing the active standbys on worker %s: %v", x.job.id, sh.w.id, err))
		} else {
			d.Replacement = true
		}
		if err != nil || !sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Deploy{Deploy: d}}) {
			sh.ended, sh.lost = true, true // its worker is gone (and was reported so before), or the standbys cannot start
			close(sh.done)
		}
	}
	ships := map[*share][]*pb.Placement{}
	for _, id := range ids {
		if sb := x.standbyAt[id]; sb != nil && !sb.ended && slices.Contains(fresh, sb) {
			p := x.where[id]
			ships[p] = append(ships[p], standbyPlacement(id, sb))
		}
	}
	for p, pls := range ships {
		p.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{
			Key: p.key, Kind: pb.Command_SHIP, Moves: pls, Checkpoint: int64(m.ID)}}})
	}
}

// standbyPlacement says that subtask id's standby runs in share sh.
func standbyPlacement(id dataflow.SubtaskID, sh *share) *pb.Placement {
	return &pb.Placement{Subtask: ref(id), DataAddr: sh.w.dataAddr, DataKey: sh.key, Standby: true}
}

// Standbys returns the subtasks whose standby runs (engine.StandbyKiller).
func (x *remoteExecutor) Standbys() []dataflow.SubtaskID {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []dataflow.SubtaskID
	for id, sh := range x.standbyAt {
		if sh.live && !sh.ended && !sh.lost {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, func(a, b dataflow.SubtaskID) int { return cmp.Or(a.Vertex-b.Vertex, a.Subtask-b.Subtask) })
	return out
}

// KillStandby stops the standby of subtask id with err, for failure
// injection (engine.StandbyKiller): its worker reports it stopped, and
// the next completed checkpoint replaces it.
func (x *remoteExecutor) KillStandby(id dataflow.SubtaskID, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if sh := x.standbyAt[id]; sh != nil && sh.live && !sh.ended {
		sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{
			Key: sh.key, Kind: pb.Command_KILL_STANDBY, Subtask: ref(id), Error: err.Error()}}})
	}
}

// standbyStopped forgets the standby of subtask id in standby share key,
// which stopped; the next completed checkpoint replaces it.
func (x *remoteExecutor) standbyStopped(w *workerConn, key string, id dataflow.SubtaskID, why string) {
	x.mu.Lock()
	if sh := x.standbyAt[id]; sh != nil && sh.key == key {
		delete(x.standbyAt, id)
	}
	x.mu.Unlock()
	x.c.cfg.Log(fmt.Sprintf("job %s: the active standby of subtask %s on worker %s stopped: %s; a new one starts from the next completed checkpoint", x.job.id, id, w.id, why))
}

// dismissStandbysLocked cancels the standby shares that run no subtask
// once every share that runs subtasks ended without failing: the job's
// subtasks finished and were released. A standby ends by itself when it
// applies its primary's logged end of input; one that has yet to (the
// shipping of its primary's log ended with the primary's share) would
// otherwise keep the attempt from ending.
func (x *remoteExecutor) dismissStandbysLocked() {
	if x.failed {
		return
	}
	runs := map[*share]bool{}
	for _, sh := range x.where {
		if !sh.ended || sh.lost {
			return
		}
		runs[sh] = true
	}
	for _, sh := range x.shares {
		if sh.standbys && sh.live && !sh.ended && !sh.dismissed && !runs[sh] {
			sh.dismissed = true
			x.c.cfg.Log(fmt.Sprintf("job %s: every subtask ended: dismissing the active standbys of share %s on worker %s", x.job.id, sh.key, sh.w.id))
			sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{Key: sh.key, Kind: pb.Command_CANCEL}}})
		}
	}
}

// promotableLocked splits the subtasks of lost workers into those whose
// standby takes their place, by standby share, and the others. Of the
// subtasks restarting, all must be lost; a subtask in the cone of
// another one (engine.Cone: downstream of a sender whose output is not
// regenerated record for record) restarts from the checkpoint: its
// standby consumed what that sender will not send again.
func (x *remoteExecutor) promotableLocked(ids, all []dataflow.SubtaskID) (promote map[*share][]dataflow.SubtaskID, rest []dataflow.SubtaskID) {
	promote = map[*share][]dataflow.SubtaskID{}
	inCone := map[dataflow.SubtaskID]bool{}
	for _, y := range all {
		for _, z := range engine.Cone(x.plan, y)[1:] {
			inCone[z] = true
		}
	}
	for _, id := range ids {
		sh := x.standbyAt[id]
		if sh == nil || sh.ended || sh.lost || !sh.live || inCone[id] {
			rest = append(rest, id)
			continue
		}
		promote[sh] = append(promote[sh], id)
		delete(x.standbyAt, id)
	}
	return promote, rest
}

// promoteLocked tells standby share sh that its standbys of ids take
// their subtasks' place, given what the receivers hold from the lost
// ones, and passes on the replay requests held for them.
func (x *remoteExecutor) promoteLocked(sh *share, ids []dataflow.SubtaskID, delivered []*pb.ChannelCount, attempt int) awaited {
	tok, ch := x.tokenLocked()
	var refs []*pb.SubtaskRef
	var names []string
	for _, id := range ids {
		refs = append(refs, ref(id))
		names = append(names, id.String())
	}
	x.c.cfg.Log(fmt.Sprintf("job %s: the active standbys of subtasks %s on worker %s take their place", x.job.id, strings.Join(names, ", "), sh.w.id))
	sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{Key: sh.key,
		Kind: pb.Command_PROMOTE, Subtasks: refs, Delivered: delivered, Checkpoint: x.lastTrigger, Attempt: int32(attempt), Token: tok}}})
	for _, id := range ids {
		x.passPendingLocked(sh, id)
	}
	return awaited{sh, ch}
}
