package cluster

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/task"
)

// This file is the coordinator's side of active standby on a cluster
// (task/replica.go): every subtask that can have one (task.Replicated)
// gets a standby on another worker, standby workers first, then those
// with the most free slots, in a share of its own (a replica share) that
// takes no slot. The primary's worker
// ships the primary's input log to it. When the primary's worker is lost,
// the standby takes its place (PROMOTE) instead of a restart from the
// checkpoint: the other shares point their channels to it as for a moved
// subtask (MOVE), and it asks for replays from what it consumed.
//
// A standby that stopped (its primary restarted, its log outgrew the
// retain limit) or was used is not replaced within the attempt: the
// subtask restarts alone, with upstream backup, when it fails again.

// placeReplicasLocked places a standby of every replicated subtask on a
// worker other than its primary's, and returns the new replica shares.
func (x *remoteExecutor) placeReplicasLocked(ws []*workerConn) []*share {
	x.replicas = map[task.SubtaskID]*share{}
	placed := map[*workerConn]map[int]bool{} // subtask indexes with standbys, by worker
	// better reports whether a is a better place than b: a standby
	// worker, then more free slots, then fewer standbys placed.
	better := func(a, b *workerConn) bool {
		if a.standby != b.standby {
			return a.standby
		}
		if fa, fb := a.slots-a.used, b.slots-b.used; fa != fb {
			return fa > fb
		}
		if len(placed[a]) != len(placed[b]) {
			return len(placed[a]) < len(placed[b])
		}
		return a.id < b.id
	}
	byWorker := map[*workerConn]*share{}
	var fresh []*share
	var none []string
	for _, v := range x.plan.Vertices {
		if !task.Replicated(v) {
			continue
		}
		for i := range v.Parallelism {
			id := task.SubtaskID{Vertex: v.ID, Subtask: i}
			primary := x.where[id]
			if primary == nil {
				continue
			}
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
			if placed[w] == nil {
				placed[w] = map[int]bool{}
			}
			placed[w][i] = true
			sh := byWorker[w]
			if sh == nil {
				sh = &share{key: fmt.Sprintf("%s/a%d", x.key, len(fresh)+1), w: w, done: make(chan struct{}), live: true, replica: true}
				byWorker[w] = sh
				fresh = append(fresh, sh)
				x.shares = append(x.shares, sh)
			}
			x.replicas[id] = sh
		}
	}
	if len(none) > 0 {
		x.c.cfg.Log(fmt.Sprintf("job %s: no other worker for the active standbys of subtasks %s", x.job.id, strings.Join(none, ", ")))
	}
	for _, sh := range fresh {
		var names []string
		for id, s := range x.replicas {
			if s == sh {
				names = append(names, id.String())
			}
		}
		slices.Sort(names)
		x.c.cfg.Log(fmt.Sprintf("job %s: active standbys of subtasks %s on worker %s", x.job.id, strings.Join(names, ", "), sh.w.id))
	}
	return fresh
}

// replicaPlacementLocked says where the standbys run.
func (x *remoteExecutor) replicaPlacementLocked() []*pb.Placement {
	var out []*pb.Placement
	for id, sh := range x.replicas {
		out = append(out, &pb.Placement{Subtask: ref(id), DataAddr: sh.w.dataAddr, DataKey: sh.key, Replica: true})
	}
	return out
}

// standbyStopped forgets the standby of subtask id, which stopped.
func (x *remoteExecutor) standbyStopped(w *workerConn, id task.SubtaskID, why string) {
	x.mu.Lock()
	if sh := x.replicas[id]; sh != nil && sh.w == w {
		delete(x.replicas, id)
	}
	x.mu.Unlock()
	x.c.cfg.Log(fmt.Sprintf("job %s: the active standby of subtask %s on worker %s stopped: %s; the subtask restarts alone if it fails", x.job.id, id, w.id, why))
}

// promotableLocked splits the subtasks of lost workers into those whose
// standby takes their place, by replica share, and the others. Of the
// subtasks restarting, all must be lost; a subtask in the cone of
// another one (engine.Cone: downstream of a sender whose output is not
// regenerated record for record) restarts from the checkpoint: its
// standby consumed what that sender will not send again.
func (x *remoteExecutor) promotableLocked(ids, all []task.SubtaskID) (promote map[*share][]task.SubtaskID, rest []task.SubtaskID) {
	promote = map[*share][]task.SubtaskID{}
	inCone := map[task.SubtaskID]bool{}
	for _, y := range all {
		for _, z := range engine.Cone(x.plan, y)[1:] {
			inCone[z] = true
		}
	}
	for _, id := range ids {
		sh := x.replicas[id]
		if sh == nil || sh.ended || sh.lost || !sh.live || inCone[id] {
			rest = append(rest, id)
			continue
		}
		promote[sh] = append(promote[sh], id)
		delete(x.replicas, id)
	}
	return promote, rest
}

// promoteLocked tells replica share sh that its standbys of ids take
// their subtasks' place, given what the receivers hold from the lost
// ones, and passes on the replay requests held for them.
func (x *remoteExecutor) promoteLocked(sh *share, ids []task.SubtaskID, delivered []*pb.ChannelCount, attempt int) awaited {
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
