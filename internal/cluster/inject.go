package cluster

import (
	"context"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/task"
)

// Failures injected at named points of the checkpoint protocol (task.Point)
// on a cluster: the job's failure schedule (engine.Injector) lives with the
// coordinator, so a subtask that reaches a named point asks it, and waits
// for the answer. One schedule for every worker keeps a seed's meaning:
// the same count of failures, armed one at a time, skipping the same
// number of occurrences, whichever worker reaches the point. Only jobs
// that inject failures ask (Deploy.inject_failures); each ask is a round
// trip on the worker's session, at checkpoint events, not per record.

// injectHook returns the worker attempt's task.Options.Inject: it asks the
// coordinator and blocks until it answers, the session ends or ctx ends
// (then the subtask does not fail).
func (g *agent) injectHook(ctx context.Context, a *workerAttempt) func(task.Point, dataflow.SubtaskID, int64) bool {
	return func(p task.Point, id dataflow.SubtaskID, checkpoint int64) bool {
		answer := make(chan bool, 1)
		lost := g.sessionLost()
		g.mu.Lock()
		g.nextInject++
		token := g.nextInject
		if g.injects == nil {
			g.injects = map[int64]chan bool{}
		}
		g.injects[token] = answer
		g.mu.Unlock()
		defer func() {
			g.mu.Lock()
			delete(g.injects, token)
			g.mu.Unlock()
		}()
		if !a.isClaimed() {
			return false // no coordinator to ask
		}
		g.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Inject{Inject: &pb.InjectQuery{
			Key: a.d.Key, Point: int32(p), Subtask: ref(id), Checkpoint: checkpoint, Token: token}}})
		select {
		case fail := <-answer:
			return fail
		case <-ctx.Done():
			return false
		case <-lost:
			return false
		}
	}
}

// injectAnswer passes the coordinator's answer to the subtask that asked.
func (g *agent) injectAnswer(c *pb.Command) {
	g.mu.Lock()
	answer := g.injects[c.Token]
	g.mu.Unlock()
	if answer != nil {
		select {
		case answer <- c.Fail:
		default: // answered already
		}
	}
}

// answerInject decides an InjectQuery by the attempt's failure schedule
// and answers the worker that asked.
func (x *remoteExecutor) answerInject(w *workerConn, q *pb.InjectQuery) {
	fail := false
	if hook := x.spec.Options.Inject; hook != nil {
		fail = hook(task.Point(q.Point), sid(q.Subtask), q.Checkpoint)
	}
	w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{
		Key: q.Key, Kind: pb.Command_INJECT, Token: q.Token, Fail: fail}}})
}
