package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/store"
)

// This file is the coordinator's side of restarting single subtasks on a
// cluster (engine.SubtaskRestarter): fine-grained failover with upstream
// backup across workers.
//
// A subtask that fails on a live worker restarts there (RESTART). The
// subtasks of a lost worker restart in a new share of the attempt on
// another worker, passive standbys first:
//
//  1. every other share is told where they run now (MOVE): it severs the
//     channels from the lost subtasks, points its channels to them at the
//     new share, and answers with the records it holds from each;
//  2. the new share is deployed to rejoin: its subtasks restore the
//     checkpoint, and its sources send no barrier before they caught up
//     with what their receivers hold;
//  3. restarted subtasks ask their senders for replays through the
//     coordinator (ReplayRequest, REPLAY), which holds the requests for a
//     sender that is itself moving until its new share is deployed.
//
// Every answer carries a token; Restart's channel is closed once each
// restarted subtask asked for its replays.

// restarts is the bookkeeping of an executor's restarts, guarded by the
// executor's mu.
type restarts struct {
	tokens  int64
	waiting map[int64]chan *pb.Moved                   // unanswered MOVE and RESTART commands and rejoining shares
	pending map[dataflow.SubtaskID][]*pb.ReplayRequest // for senders being moved
	moved   int                                        // shares created to rejoin
}

func (r *restarts) init() {
	r.waiting = map[int64]chan *pb.Moved{}
	r.pending = map[dataflow.SubtaskID][]*pb.ReplayRequest{}
}

// tokenLocked returns a new token and the channel its answer arrives on.
func (x *remoteExecutor) tokenLocked() (int64, chan *pb.Moved) {
	x.restart.tokens++
	ch := make(chan *pb.Moved, 1)
	x.restart.waiting[x.restart.tokens] = ch
	return x.restart.tokens, ch
}

func (x *remoteExecutor) answer(token int64, m *pb.Moved) {
	x.mu.Lock()
	ch := x.restart.waiting[token]
	delete(x.restart.waiting, token)
	x.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

// subtaskFailed tells the engine that subtask id failed alone.
func (x *remoteExecutor) subtaskFailed(id dataflow.SubtaskID, err error) {
	h := x.spec.Options.Host
	if h == nil {
		return
	}
	x.wg.Add(1)
	go func() { // Failed waits for the engine, or for the attempt's end
		defer x.wg.Done()
		h.Failed(id, err)
	}()
}

func (x *remoteExecutor) onRestartMessage(w *workerConn, m *pb.WorkerMessage) {
	switch v := m.Msg.(type) {
	case *pb.WorkerMessage_Failed:
		if v.Failed.Standby {
			x.standbyStopped(w, v.Failed.Key, sid(v.Failed.Subtask), v.Failed.Error)
			return
		}
		f := v.Failed
		x.subtaskFailed(sid(f.Subtask), remoteFailure(w.id, f.Error, f.Class, f.CorruptCheckpoint))
	case *pb.WorkerMessage_Stopped:
		x.stopped(w, v.Stopped)
	case *pb.WorkerMessage_Restarted:
		x.answer(v.Restarted.Token, &pb.Moved{})
	case *pb.WorkerMessage_Committed:
		x.answer(v.Committed.Token, &pb.Moved{})
	case *pb.WorkerMessage_Moved:
		x.answer(v.Moved.Token, v.Moved)
	case *pb.WorkerMessage_Replay:
		x.routeReplay(v.Replay)
	}
}

// routeReplay passes a replay request on to the share that runs its
// sender, or holds it while the sender moves.
func (x *remoteExecutor) routeReplay(q *pb.ReplayRequest) {
	sender := sid(q.Sender)
	x.mu.Lock()
	defer x.mu.Unlock()
	sh := x.where[sender]
	switch {
	case sh == nil:
	case sh.lost || !sh.live:
		x.restart.pending[sender] = append(x.restart.pending[sender], q)
	case !sh.ended:
		sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{
			Key: sh.key, Kind: pb.Command_REPLAY, Replay: q}}})
	}
}

// Stop stops running subtasks so that they restart with a failed one.
//
// A subtask may be reporting its end as the STOP command travels to its
// worker. Its worker answers the command with Stopped once its runtime
// stopped the subtask and reports no end of the stopped incarnation
// after that answer (workerAttempt.reportFinished); until the answer
// arrives, an end reported for the subtask is the stopped incarnation's
// and is ignored (noteFinished). Taken for the next incarnation's, it
// would have the engine trigger checkpoints at that incarnation as at a
// finished subtask and take the final checkpoint before its end.
func (x *remoteExecutor) Stop(ids []dataflow.SubtaskID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, id := range ids {
		delete(x.finished, id)
		if sh := x.commandLocked(id, &pb.Command{Kind: pb.Command_STOP, Subtasks: []*pb.SubtaskRef{ref(id)}}); sh != nil {
			if sh.stopping == nil {
				sh.stopping = map[dataflow.SubtaskID]int{}
			}
			sh.stopping[id]++
		}
	}
}

// stopped takes worker w's answer to a STOP command.
func (x *remoteExecutor) stopped(w *workerConn, m *pb.Stopped) {
	x.mu.Lock()
	defer x.mu.Unlock()
	sh := x.shareOfLocked(w, m.Key)
	if sh == nil {
		return
	}
	for _, r := range m.Subtasks {
		id := sid(r)
		if sh.stopping[id]--; sh.stopping[id] <= 0 {
			delete(sh.stopping, id)
		}
	}
}

// Finished reports whether subtask id's running incarnation finished its
// input: an end reported before the subtask was stopped or restarted
// since does not count (engine's finishedReporter).
func (x *remoteExecutor) Finished(id dataflow.SubtaskID) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.finished[id]
}

// noteFinished records the end of subtask id that worker w's share key
// reported, unless the share was told to stop the subtask and has not
// answered yet (Stop): it reports whether the end counts.
func (x *remoteExecutor) noteFinished(w *workerConn, key string, id dataflow.SubtaskID) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if sh := x.shareOfLocked(w, key); sh != nil && sh.stopping[id] > 0 {
		return false
	}
	x.finished[id] = true
	return true
}

// Restart restarts failed or stopped subtasks from checkpoint m: those of
// live workers where they ran, those of lost workers in new shares.
func (x *remoteExecutor) Restart(ctx context.Context, ids []dataflow.SubtaskID, m *store.Metadata, attempt int) (<-chan struct{}, error) {
	x.mu.Lock()
	for _, id := range ids {
		delete(x.finished, id)
	}
	x.mu.Unlock()
	ready := make(chan struct{})
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		defer close(ready)
		ctx, stop := x.untilHalted(ctx)
		defer stop()
		if err := x.restartTasks(ctx, ids, m, attempt); err != nil && ctx.Err() == nil {
			x.post(endEvent{nil, err})
		}
	}()
	return ready, nil
}

// untilHalted returns ctx, cancelled as well once the attempt failed or
// was cancelled: a restart in flight stops waiting for slots and answers
// then, for Run waits for it before it returns (and gives back the slots
// a restart may wait for). stop cancels the context and waits for the
// goroutine that watches the attempt.
func (x *remoteExecutor) untilHalted(ctx context.Context) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-x.halted:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		cancel()
		<-watched
	}
}

// awaited is an answer a restart waits for, from share sh.
type awaited struct {
	sh *share
	ch chan *pb.Moved
}

// wait returns the answer, or nil if the share ended without one (or
// ctx ended first).
func (a awaited) wait(ctx context.Context) *pb.Moved {
	select {
	case m := <-a.ch:
		return m
	case <-a.sh.done:
		select { // an answer the share sent before its end
		case m := <-a.ch:
			return m
		default:
		}
	case <-ctx.Done():
	}
	return nil
}

func (x *remoteExecutor) restartTasks(ctx context.Context, ids []dataflow.SubtaskID, m *store.Metadata, attempt int) error {
	x.mu.Lock()
	if x.failed {
		x.mu.Unlock()
		return nil // the attempt ends: nothing restarts any more
	}
	inPlace := map[*share][]dataflow.SubtaskID{}
	var moving []dataflow.SubtaskID
	for _, id := range ids {
		switch sh := x.where[id]; {
		case sh == nil || sh.ended && !sh.lost:
		case sh.lost:
			moving = append(moving, id)
		default:
			inPlace[sh] = append(inPlace[sh], id)
		}
	}
	var waits []awaited
	for sh, here := range inPlace {
		restore, err := shareRestore(m, x.plan, x.cfg.AllowNonRestoredState, here)
		if err != nil {
			x.mu.Unlock()
			return fmt.Errorf("encoding the checkpoint to restore: %w", err)
		}
		refs := make([]*pb.SubtaskRef, len(here))
		for i, id := range here {
			refs[i] = ref(id)
		}
		tok, ch := x.tokenLocked()
		sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{Key: sh.key,
			Kind: pb.Command_RESTART, Subtasks: refs, Restore: restore, Attempt: int32(attempt), Token: tok}}})
		waits = append(waits, awaited{sh, ch})
	}
	x.mu.Unlock()
	if len(moving) > 0 {
		more, err := x.move(ctx, moving, ids, m, attempt)
		if err != nil {
			return err
		}
		waits = append(waits, more...)
	}
	var ended []string
	for _, a := range waits {
		if a.wait(ctx) == nil && ctx.Err() == nil {
			ended = append(ended, fmt.Sprintf("%s on worker %s", a.sh.key, a.sh.w.id))
		}
	}
	if len(ended) > 0 {
		// A standby share ends by itself once its last standby stopped;
		// one may stop as the order to take over travels to it. The
		// subtasks the share was to run then run nowhere.
		return fmt.Errorf("restarting subtasks: share %s ended before it ran the subtasks it was to run (an active standby that stopped as it was promoted)",
			strings.Join(ended, ", "))
	}
	return nil
}

// move restarts the subtasks of lost workers (ids, of all restarting)
// in new shares, or promotes their active standbys, and returns the
// answers to wait for: each new share's rejoin, each promotion.
func (x *remoteExecutor) move(ctx context.Context, ids, all []dataflow.SubtaskID, m *store.Metadata, attempt int) ([]awaited, error) {
	x.mu.Lock()
	promote, ids := x.promotableLocked(ids, all)
	x.mu.Unlock()
	var idx []int
	for _, id := range ids {
		if !slices.Contains(idx, id.Subtask) {
			idx = append(idx, id.Subtask)
		}
	}
	slices.Sort(idx)
	var slots []*workerConn
	if len(idx) > 0 {
		var err error
		if slots, err = x.c.takeSlots(ctx, x.job, len(idx), true); err != nil {
			return nil, err
		}
	}
	// 1. New shares, one per worker; standbys that take their place.
	x.mu.Lock()
	byWorker := map[*workerConn]*share{}
	var fresh []*share
	var moves []*pb.Placement
	for sh, pids := range promote {
		before := x.slotsOnLocked(sh)
		for _, id := range pids {
			x.where[id] = sh
			moves = append(moves, &pb.Placement{Subtask: ref(id), DataAddr: sh.w.dataAddr, DataKey: sh.key})
		}
		taken := x.slotsOnLocked(sh) - before
		x.c.mu.Lock()
		sh.w.used += taken // given back by release, as every share's
		x.c.mu.Unlock()
	}
	for _, id := range ids {
		w := slots[slices.Index(idx, id.Subtask)]
		sh := byWorker[w]
		if sh == nil {
			x.restart.moved++
			sh = &share{key: fmt.Sprintf("%s/r%d", x.key, x.restart.moved), w: w, done: make(chan struct{})}
			byWorker[w] = sh
			fresh = append(fresh, sh)
			x.shares = append(x.shares, sh)
		}
		x.where[id] = sh
		moves = append(moves, &pb.Placement{Subtask: ref(id), DataAddr: w.dataAddr, DataKey: sh.key})
	}
	// 2. Every other share severs the lost subtasks and points to the new.
	var told []awaited
	for _, sh := range x.shares {
		if sh.live && !sh.ended {
			tok, ch := x.tokenLocked()
			sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{Key: sh.key,
				Kind: pb.Command_MOVE, Moves: moves, Token: tok}}})
			told = append(told, awaited{sh, ch})
		}
	}
	x.mu.Unlock()
	x.c.mu.Lock()
	for _, sh := range fresh {
		x.c.executors[sh.key] = x
	}
	x.c.mu.Unlock()
	delivered := map[dataflow.Channel]int64{}
	for _, a := range told {
		m := a.wait(ctx)
		if m == nil {
			continue
		}
		for _, c := range m.Delivered {
			ch := dataflow.Channel{Edge: int(c.Edge), From: int(c.From), To: int(c.To)}
			delivered[ch] = max(delivered[ch], c.N)
		}
	}
	if ctx.Err() != nil {
		x.abandon(fresh)
		return nil, ctx.Err()
	}
	var counts []*pb.ChannelCount
	for c, n := range delivered {
		counts = append(counts, &pb.ChannelCount{Edge: int32(c.Edge), From: int32(c.From), To: int32(c.To), N: n})
	}
	// 3. Deploy the new shares to rejoin, then pass on the replay
	// requests held for their subtasks.
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.failed {
		x.abandon(fresh)
		return nil, errors.New("the attempt ended")
	}
	placement := x.placementLocked()
	var waits []awaited
	for sh, pids := range promote {
		waits = append(waits, x.promoteLocked(sh, pids, counts, attempt))
	}
	for _, sh := range fresh {
		d, err := x.deployMessage(sh, placement, m)
		if err != nil {
			x.abandon(fresh)
			return nil, err
		}
		tok, ch := x.tokenLocked()
		d.Attempt, d.Rejoin, d.Incarnation, d.Delivered, d.Token = int32(attempt), true, int64(attempt)<<20, counts, tok
		var names []string
		for _, r := range d.Subtasks {
			names = append(names, sid(r).String())
		}
		x.c.cfg.Log(fmt.Sprintf("job %s: restarting subtasks %s of a lost worker on worker %s", x.job.id, strings.Join(names, ", "), sh.w.id))
		if !sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Deploy{Deploy: d}}) {
			x.abandon(fresh)
			return nil, fmt.Errorf("restarting subtasks on worker %s: the worker is gone", sh.w.id)
		}
		sh.live = true
		for _, r := range d.Subtasks {
			x.passPendingLocked(sh, sid(r))
		}
		waits = append(waits, awaited{sh, ch})
	}
	return waits, nil
}

// abandon ends the new shares of a move that were not deployed: the
// attempt ended while the move waited, or a worker was gone. Run waits
// for every share to end, and nothing else would end these. Their
// subtasks stay placed in them, so that release gives back their slots.
// It is called by the goroutine that set the shares live, holding mu or
// not.
func (x *remoteExecutor) abandon(fresh []*share) {
	for _, sh := range fresh {
		if !sh.live {
			x.post(endEvent{sh, nil})
		}
	}
}

// passPendingLocked passes the replay requests held for moving sender id
// on to share sh, which runs it now.
func (x *remoteExecutor) passPendingLocked(sh *share, id dataflow.SubtaskID) {
	for _, q := range x.restart.pending[id] {
		sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{
			Key: sh.key, Kind: pb.Command_REPLAY, Replay: q}}})
	}
	delete(x.restart.pending, id)
}

var _ engine.SubtaskRestarter = (*remoteExecutor)(nil)
