package cluster

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/task"
)

// What each subtask of a stalled attempt waits on (engine.WaitReporter):
// the coordinator asks every share of the attempt (a WAITS command), and
// each worker answers with task.Runtime.Waits of its runtime. Nothing is
// asked before the engine finds the attempt stalled.

// Waits asks every running share of the attempt what its subtasks wait on
// and waits up to timeout for the answers. A subtask whose worker was
// lost, or did not answer in time, is reported as such.
func (x *remoteExecutor) Waits(timeout time.Duration) []task.SubtaskWait {
	type asked struct {
		sh  *share
		tok int64
		ch  chan *pb.Waits
	}
	var all []asked
	x.mu.Lock()
	if x.waits == nil {
		x.waits = map[int64]chan *pb.Waits{}
	}
	for _, sh := range x.shares {
		if sh.ended || !sh.live {
			continue
		}
		x.restart.tokens++
		tok, ch := x.restart.tokens, make(chan *pb.Waits, 1)
		x.waits[tok] = ch
		// The workers answer within three quarters of the time, so that
		// their answers arrive before it is up.
		sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{
			Key: sh.key, Kind: pb.Command_WAITS, Token: tok, TimeoutNs: int64(timeout * 3 / 4)}}})
		all = append(all, asked{sh, tok, ch})
	}
	where := make(map[dataflow.SubtaskID]*share, len(x.where))
	for id, sh := range x.where {
		where[id] = sh
	}
	standbys := make(map[dataflow.SubtaskID]*share, len(x.standbyAt))
	for id, sh := range x.standbyAt {
		if !sh.ended {
			standbys[id] = sh
		}
	}
	x.mu.Unlock()

	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	expired := false
	answered := map[*share]bool{}
	var out []task.SubtaskWait
	for _, a := range all {
		var m *pb.Waits
		if !expired {
			select {
			case m = <-a.ch:
			case <-deadline.C:
				expired = true // the rest only if they answered already
			}
		}
		if m == nil {
			select {
			case m = <-a.ch:
			default:
			}
		}
		if m == nil {
			continue
		}
		answered[a.sh] = true
		for _, w := range m.Subtasks {
			id := sid(w.Subtask)
			if id.Vertex < 0 || id.Vertex >= len(x.plan.Vertices) {
				continue
			}
			out = append(out, task.SubtaskWait{Subtask: id, Task: x.plan.Vertices[id.Vertex].Name(), Standby: w.Standby,
				State: fmt.Sprintf("%s (on worker %s)", w.State, a.sh.w.id)})
		}
	}
	x.mu.Lock()
	for _, a := range all {
		delete(x.waits, a.tok) // unanswered: a late answer is dropped
	}
	x.mu.Unlock()
	reported := map[dataflow.SubtaskID]bool{}
	for _, w := range out {
		if !w.Standby {
			reported[w.Subtask] = true
		}
	}
	for id, sh := range where {
		if reported[id] {
			continue
		}
		state := fmt.Sprintf("its worker %s did not answer in %v", sh.w.id, timeout)
		switch {
		case sh.lost:
			state = fmt.Sprintf("its worker %s was lost; waiting for its restart", sh.w.id)
		case sh.ended:
			state = fmt.Sprintf("its share on worker %s ended", sh.w.id)
		case !sh.live:
			state = fmt.Sprintf("moving to worker %s, where its share is not deployed yet", sh.w.id)
		case answered[sh]:
			state = fmt.Sprintf("its worker %s did not report it", sh.w.id)
		}
		out = append(out, task.SubtaskWait{Subtask: id, Task: x.plan.Vertices[id.Vertex].Name(), State: state})
	}
	// The attempt ends only once its standby shares ended too: one that
	// did not answer is named, with why it may not have.
	for id, sh := range standbys {
		if answered[sh] {
			continue
		}
		state := fmt.Sprintf("its worker %s did not answer in %v", sh.w.id, timeout)
		if !sh.live {
			state = fmt.Sprintf("its standby share %s on worker %s is not deployed yet and has not ended", sh.key, sh.w.id)
		}
		out = append(out, task.SubtaskWait{Subtask: id, Task: x.plan.Vertices[id.Vertex].Name(), Standby: true, State: state})
	}
	slices.SortFunc(out, func(a, b task.SubtaskWait) int {
		return cmp.Or(cmp.Compare(a.Subtask.Vertex, b.Subtask.Vertex), cmp.Compare(a.Subtask.Subtask, b.Subtask.Subtask),
			boolCompare(a.Standby, b.Standby))
	})
	return out
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// answerWaits passes a worker's answer to the WAITS command it answers.
func (x *remoteExecutor) answerWaits(m *pb.Waits) {
	x.mu.Lock()
	ch := x.waits[m.Token]
	delete(x.waits, m.Token)
	x.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

// reportWaits answers a WAITS command: what each subtask of the share
// waits on. A standby share reports its active standbys, and those it
// promoted as the subtasks they now are.
func (a *workerAttempt) reportWaits(c *pb.Command) {
	a.mu.Lock()
	rt := a.rt
	a.mu.Unlock()
	out := &pb.Waits{Key: a.d.Key, Token: c.Token}
	if rt == nil {
		for _, r := range a.d.Subtasks {
			out.Subtasks = append(out.Subtasks, &pb.SubtaskWait{Subtask: r, Standby: a.d.StandbyShare,
				State: "being deployed: building the job and reading its state"})
		}
	} else {
		for _, w := range rt.Waits(time.Duration(c.TimeoutNs)) {
			out.Subtasks = append(out.Subtasks, &pb.SubtaskWait{Subtask: ref(w.Subtask), Standby: w.Standby, State: w.State})
		}
	}
	a.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Waits{Waits: out}})
}

var _ engine.WaitReporter = (*remoteExecutor)(nil)
