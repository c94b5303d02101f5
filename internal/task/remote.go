package task

import (
	"context"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
)

// This file is the runtime's side of restarting single subtasks on a
// cluster (UpstreamBackup with Options.Local): replay requests that cross
// processes, and a runtime that starts as the replacement of subtasks a
// lost process ran.

// ReplayRequest asks a sender to replay its retained output on one
// channel to a restarted receiver: edge Edge's channel to subtask To,
// from record From on, answered for the receiver's incarnation
// Incarnation.
type ReplayRequest struct {
	Edge, To          int
	From, Incarnation int64
}

// Replay hands a replay request from a restarted receiver in another
// process to local subtask sender.
func (r *Runtime) Replay(sender dataflow.SubtaskID, q ReplayRequest) {
	if !r.IsLocal(sender) {
		return
	}
	r.send(sender, control{kind: ctlReplay, edge: q.Edge, to: q.To, from: q.From, incarnation: q.Incarnation})
}

// requestReplay sends replay request c to sender id: to its inbox when it
// runs here, else through Options.RequestReplay. In a runtime of remote
// standbys only a promoted standby runs as its subtask here; another local
// subtask's standby follows a primary elsewhere (or stopped), which is
// where the request goes.
func (r *Runtime) requestReplay(id dataflow.SubtaskID, c control) {
	if r.opts.PrimaryElsewhere && r.IsLocal(id) {
		r.mu.Lock()
		here := r.promoted[id]
		r.mu.Unlock()
		if !here {
			r.sendRemote(id, c)
			return
		}
	}
	r.send(id, c)
}

// sendRemote passes a control message for a subtask in another process
// on: only replay requests travel (Options.RequestReplay); the job sends
// the others to each process itself.
func (r *Runtime) sendRemote(id dataflow.SubtaskID, c control) {
	if c.kind == ctlReplay && r.opts.RequestReplay != nil {
		r.opts.RequestReplay(id, ReplayRequest{Edge: c.edge, To: c.to, From: c.from, Incarnation: c.incarnation})
	}
}

// LocalInput is a local gate channel: Gate of subtask To's input gate,
// which is Channel.
type LocalInput struct {
	To      dataflow.SubtaskID
	Gate    int
	Channel dataflow.Channel
}

// InputsFrom returns the local gate channels subtask from sends to.
func (r *Runtime) InputsFrom(from dataflow.SubtaskID) []LocalInput {
	var out []LocalInput
	for _, e := range r.plan.Vertices[from.Vertex].Outputs {
		for j := range e.Target.Parallelism {
			to := dataflow.SubtaskID{Vertex: e.Target.ID, Subtask: j}
			if !r.IsLocal(to) || (e.Partitioning == plan.Forward && j != from.Subtask) {
				continue
			}
			ch := r.offsets[e]
			if e.Partitioning != plan.Forward {
				ch += from.Subtask
			}
			out = append(out, LocalInput{To: to, Gate: ch, Channel: dataflow.Channel{Edge: r.edgeIndex[e], From: from.Subtask, To: j}})
		}
	}
	return out
}

// catchUpFrom returns what a subtask that a lost process ran had
// delivered on each output channel (per writer, per channel), from the
// receivers' counts (Options.Delivered).
func (r *Runtime) catchUpFrom(id dataflow.SubtaskID) [][]int64 {
	v := r.plan.Vertices[id.Vertex]
	out := make([][]int64, len(v.Outputs))
	for w, e := range v.Outputs {
		n := e.Target.Parallelism
		if e.Partitioning == plan.Forward {
			n = 1
		}
		out[w] = make([]int64, n)
		for j := range n {
			to := j
			if e.Partitioning == plan.Forward {
				to = id.Subtask
			}
			out[w][j] = max(0, r.opts.Delivered[dataflow.Channel{Edge: r.edgeIndex[e], From: id.Subtask, To: to}])
		}
	}
	return out
}

// rejoin starts the local subtasks as restarted incarnations
// (Options.Rejoin): they restore the checkpoint, ask their senders for
// replays, and catch up with what their lost incarnation had delivered
// before they take a snapshot. A subtask whose output depends
// on a logged consumption order of merged inputs cannot rejoin: that log
// was lost with its process. It returns once they started;
// Rejoined is closed once they asked for their replays.
func (r *Runtime) rejoin(ctx context.Context) {
	var ids []dataflow.SubtaskID
	r.mu.Lock()
	r.incarnations = max(r.incarnations, r.opts.Incarnation)
	for _, v := range r.plan.Vertices {
		for i := range v.Parallelism {
			id := dataflow.SubtaskID{Vertex: v.ID, Subtask: i}
			if !r.IsLocal(id) {
				continue
			}
			ids = append(ids, id)
			r.down[id] = true
			r.wg.Add(1) // as failed does; Restart gives it back
			exited := make(chan struct{})
			close(exited)
			r.exited[id] = exited
			r.lastSent[id] = r.catchUpFrom(id)
			if g := r.gates[v.ID][i]; g != nil {
				// As a failed subtask's gate does until its restart asks
				// for replays: senders must not wait for the state to load.
				g.Discard()
			}
			if d := r.dets[v.ID][i]; d != nil {
				// The order its lost incarnation consumed its inputs in
				// was logged in the lost process: it cannot be repeated,
				// and the restart fails over globally (ErrBackupLost).
				d.Forget()
			}
		}
	}
	r.mu.Unlock()
	ready := r.restart(ctx, ids, r.opts.Restore, r.opts.Restored, r.opts.Attempt, true)
	r.wg.Add(1)
	go func() { // ready is closed at the latest when the subtasks stop
		defer r.wg.Done()
		<-ready
		close(r.rejoined)
	}()
}

// Rejoined returns a channel closed once the subtasks of a runtime with
// Options.Rejoin restored their state and asked for their replays; nil
// for other runtimes.
func (r *Runtime) Rejoined() <-chan struct{} { return r.rejoined }
