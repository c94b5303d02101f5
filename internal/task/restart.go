package task

import (
	"context"
	"errors"
	"sync"

	"github.com/weir-stream/weir/internal/dataflow"
)

// This file is the runtime's side of fine-grained failover
// (Options.UpstreamBackup): a failed subtask leaves the job until the
// engine restarts it, possibly with others it stops, while the rest runs.

// keepSent remembers what a stopped incarnation had sent, the most any
// consumer can hold: a restarted source catches up to it before its next
// barrier.
func (r *Runtime) keepSent(id dataflow.SubtaskID, sent [][]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev := r.lastSent[id]; len(prev) == len(sent) {
		for w := range sent {
			for j := range min(len(sent[w]), len(prev[w])) {
				sent[w][j] = max(sent[w][j], prev[w][j])
			}
		}
	}
	r.lastSent[id] = sent
}

// errStopped stops a subtask that restarts with a failed one.
var errStopped = errors.New("stopped to restart with a failed subtask")

// failed takes a subtask that stopped under UpstreamBackup out of the
// job until Restart: its gate drops what senders send, and the job is
// told unless the job stopped it.
func (r *Runtime) failed(id dataflow.SubtaskID, err error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.down[id] = true
	delete(r.finished, id)
	r.wg.Add(1) // held until Restart, or given back when Run ends
	r.mu.Unlock()
	if g := r.gates[id.Vertex][id.Subtask]; g != nil {
		g.Discard()
	}
	if !errors.Is(err, errStopped) {
		r.opts.Host.Failed(id, err)
	}
}

// Stop stops the given running subtasks so that they can restart with a
// failed one (UpstreamBackup). Their stop is not reported to Host.Failed.
func (r *Runtime) Stop(ids []dataflow.SubtaskID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if c := r.cancels[id.Vertex][id.Subtask]; c != nil && !r.down[id] {
			delete(r.finished, id)
			c(errStopped)
		}
	}
}

// Finished reports whether subtask id's running incarnation finished its
// input. One stopped or failed since does not count: it may still be
// telling Host.Finished of its end when the job has stopped it to restart,
// and the job must not take that end for the next incarnation's, which
// has its input still to read (it would trigger checkpoints at it as at
// a finished subtask, and take the final checkpoint before the end).
func (r *Runtime) Finished(id dataflow.SubtaskID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.finished[id]
}

// Restart starts new incarnations of the given stopped subtasks
// (UpstreamBackup), from state (the checkpoint restored, nil entries
// starting empty), once each has stopped. A restarted subtask takes its
// channel sequence numbers from the checkpoint and asks its senders to
// replay their retained output from there. It returns early if ctx ends
// or Run is ending.
//
// The returned channel is closed once every restarted subtask restored
// its state and asked for its replays (or opened its source, or stopped
// again). Checkpoints must not be triggered before: a barrier that
// reached a restarting subtask's gate before its replay began would be
// dropped with the rest.
func (r *Runtime) Restart(ctx context.Context, ids []dataflow.SubtaskID, state map[dataflow.SubtaskID][]byte, restored int64, attempt int) <-chan struct{} {
	return r.restart(ctx, ids, state, restored, attempt, false)
}

// restart is Restart; rejoin marks the first start of a rejoined
// runtime's subtasks (remote.go), which Restored covers.
func (r *Runtime) restart(ctx context.Context, ids []dataflow.SubtaskID, state map[dataflow.SubtaskID][]byte, restored int64, attempt int, rejoin bool) <-chan struct{} {
	ready := make(chan struct{})
	for _, id := range ids {
		r.mu.Lock()
		ch := r.exited[id]
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			close(ready)
			return ready
		}
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		close(ready)
		return ready
	}
	var subs []*subtask
	for _, id := range ids {
		if !r.down[id] {
			continue // it finished meanwhile
		}
		delete(r.down, id)
		delete(r.finished, id)
		// The gate keeps dropping what is sent to it until the new
		// incarnation restored its state and asks for replays: senders
		// must not block on it meanwhile.
		// Stale messages go, but replay requests are for the new
		// incarnation to serve.
		inbox := r.inboxes[id.Vertex][id.Subtask]
		var replays []control
		for len(inbox) > 0 {
			if c := <-inbox; c.kind == ctlReplay {
				replays = append(replays, c)
			}
		}
		for _, c := range replays {
			inbox <- c
		}
		r.incarnations++
		subs = append(subs, &subtask{v: r.plan.Vertices[id.Vertex], index: id.Subtask, incarnation: r.incarnations})
	}
	r.mu.Unlock()
	// A restarted subtask's standby followed the failed incarnation's
	// input; it stops, and its log starts again at the checkpoint.
	for _, p := range subs {
		id := p.id()
		if ch := r.dropStandby(id); ch != nil {
			<-ch
		}
		if l := r.logs[id.Vertex][id.Subtask]; l != nil {
			l.Restart(restored)
		}
	}
	restarting := make(map[dataflow.SubtaskID]bool, len(subs))
	for _, p := range subs {
		restarting[p.id()] = true
	}
	var pending sync.WaitGroup
	pending.Add(len(subs))
	for i, p := range subs {
		id := p.id()
		s := r.newSubtask(r.ctx, p.v, p.index)
		s.ready = sync.OnceFunc(pending.Done)
		s.incarnation = p.incarnation
		s.state, s.hasState = state[id]
		s.role = restartedRole(rejoin)
		r.mu.Lock()
		s.catchUp = r.catchUpTarget(p.v, p.index, r.lastSent[id], restarting)
		r.mu.Unlock()
		s.tctx.Attempt, s.tctx.Restored = attempt, restored
		if rejoin {
			r.restoring.Add(1) // Restored tells when a rejoined runtime decoded its state
			s.restoredDone = sync.OnceFunc(r.restoring.Done)
		}
		m := r.metrics[id.Vertex][id.Subtask]
		m.Restarts.Add(1)
		m.FirstWrite.Store(0) // the new incarnation's first write marks its recovery
		subs[i] = s
	}
	for _, s := range subs {
		r.start(s)
		r.wg.Done() // the count failed held
	}
	// Every restarted subtask calls ready at the latest when it stops, so
	// this goroutine ends with them.
	go func() {
		pending.Wait()
		close(ready)
	}()
	return ready
}
