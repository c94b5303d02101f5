package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// remoteExecutor is one attempt of a job spread over workers: the
// engine's view of it (engine.Executor). Each worker runs a share of it;
// under fine-grained failover with upstream backup (restart.go) the
// subtasks of a lost worker restart in new shares on other workers.
type remoteExecutor struct {
	c    *Coordinator
	job  *job
	key  string
	cfg  engine.Config
	plan *plan.Plan
	spec engine.AttemptSpec

	mu      sync.Mutex
	shares  []*share                      // every share, in placement order
	where   map[dataflow.SubtaskID]*share // where each subtask runs now
	events  chan endEvent
	closed  bool          // released
	failed  bool          // failed or cancelled: nothing restarts
	halted  chan struct{} // closed when failed is set: restarts in flight stop
	restart restarts      // see restart.go
	// Active standby (active_standby.go): the standby share of each
	// subtask whose standby runs, and the latest checkpoint triggered.
	standbyAt     map[dataflow.SubtaskID]*share
	standbyShares int // standby shares created, which number their keys
	lastTrigger   int64
	finished      map[dataflow.SubtaskID]bool // subtasks that finished their input, until they restart
	waits         map[int64]chan *pb.Waits    // unanswered WAITS commands, by token (waits.go)
	reshape       *pendingReshape             // a live rescale prepared, not started (reshape.go)
	reshapes      int                         // live rescales prepared, which number their shares' keys
	wg            sync.WaitGroup
}

// deployer returns the job's engine.Deployer: it waits for enough free
// slots, places the subtasks and deploys each worker's share.
func (c *Coordinator) deployer(j *job, cfg engine.Config) engine.Deployer {
	attempts := 0
	base := cfg.Plan
	return func(ctx context.Context, spec engine.AttemptSpec) (engine.Executor, error) {
		// The plan the engine runs now: a live rescale may have changed
		// the parallelism of tasks (the Deploy says so).
		cfg := cfg
		cfg.Plan = cmp.Or(spec.Plan, base)
		// The attempt runs the subtasks spec's Local accepts: all of them,
		// or one region's under fine-grained failover.
		want := func(id dataflow.SubtaskID) bool { return spec.Options.Local == nil || spec.Options.Local(id) }
		need := 0
		for _, v := range cfg.Plan.Vertices {
			if want(dataflow.SubtaskID{Vertex: v.ID}) {
				need = max(need, v.Parallelism)
			}
		}
		if spec.Adopt {
			if x := c.adoptAttempt(j, cfg, spec); x != nil {
				return x, nil
			}
		}
		slots, err := c.takeSlots(ctx, j, need, spec.Options.Attempt > 0)
		if err != nil {
			return nil, err
		}
		attempts++
		x := newRemoteExecutor(c, j, cfg, spec, fmt.Sprintf("%s/%d.%d", j.id, c.lead.Epoch(), attempts))
		seen := map[*workerConn]*share{}
		for _, v := range cfg.Plan.Vertices {
			for i := range v.Parallelism {
				if !want(dataflow.SubtaskID{Vertex: v.ID, Subtask: i}) {
					continue
				}
				w := slots[i]
				sh := seen[w]
				if sh == nil {
					sh = &share{key: x.key, w: w, done: make(chan struct{}), live: true}
					seen[w] = sh
					x.shares = append(x.shares, sh)
				}
				x.where[dataflow.SubtaskID{Vertex: v.ID, Subtask: i}] = sh
			}
		}
		c.mu.Lock()
		c.executors[x.key] = x
		var standbyShares []*share
		if spec.Options.ActiveStandby {
			standbyShares = x.placeAllStandbysLocked(c.workersLocked())
		}
		for _, sh := range standbyShares {
			c.executors[sh.key] = x
		}
		c.mu.Unlock()
		j.setPlacement(x)
		if err := x.deploy(); err != nil {
			x.release()
			return nil, err
		}
		return x, nil
	}
}

// newRemoteExecutor returns an attempt of job j under key, with no
// shares yet.
func newRemoteExecutor(c *Coordinator, j *job, cfg engine.Config, spec engine.AttemptSpec, key string) *remoteExecutor {
	x := &remoteExecutor{c: c, job: j, key: key, cfg: cfg, plan: cfg.Plan, spec: spec,
		where: map[dataflow.SubtaskID]*share{}, events: make(chan endEvent, 256), finished: map[dataflow.SubtaskID]bool{}, halted: make(chan struct{})}
	x.restart.init()
	return x
}

// takeSlots waits until need slots are free and takes them. A restart
// (passive standbys first) that lacks slots waits for a replacement worker
// for ReplacementTimeout, then spreads over the workers it has.
func (c *Coordinator) takeSlots(ctx context.Context, j *job, need int, restart bool) ([]*workerConn, error) {
	var spread <-chan time.Time
	if restart && c.cfg.ReplacementTimeout >= 0 {
		t := time.NewTimer(c.cfg.ReplacementTimeout)
		defer t.Stop()
		spread = t.C
	}
	spreading := false
	defer j.setDetail("")
	for {
		c.mu.Lock()
		ws, free := c.freeSlotsLocked(restart)
		if free >= need {
			slots := placeLocked(ws, need)
			c.mu.Unlock()
			return slots, nil
		}
		if spreading && len(ws) > 0 {
			slots := spreadLocked(ws, need)
			c.mu.Unlock()
			c.cfg.Log(fmt.Sprintf("job %s: no replacement within %v; spreading %d slots over %d workers with %d free", j.id, c.cfg.ReplacementTimeout, need, len(ws), free))
			return slots, nil
		}
		changed := c.changed
		c.mu.Unlock()
		j.setDetail(fmt.Sprintf("waiting for %d free slots: %d free on %d workers", need, free, len(ws)))
		select {
		case <-changed:
		case <-spread:
			spreading, spread = true, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// placeLocked takes need free slots, as many of each worker as taking
// one at a time from each worker in turn would, so that an attempt
// spreads over the workers. Slot i holds subtask i of every operator
// (slot sharing), and a worker's slots are consecutive: consecutive
// subtasks of a task run on one worker, so that a deployment names where
// they run in one run per worker (placement.go). The caller checked that
// need slots are free.
func placeLocked(ws []*workerConn, need int) []*workerConn {
	n := make([]int, len(ws))
	for taken := 0; taken < need; {
		for i, w := range ws {
			if w.used+n[i] < w.slots && taken < need {
				n[i]++
				taken++
			}
		}
	}
	return takeLocked(ws, n)
}

// spreadLocked takes need slots where there are fewer free: first the
// free ones, then more on the workers in turn beyond their slots, so that
// the subtasks of a lost worker are spread over the survivors, which
// restore their shares in parallel. As placeLocked, it returns each
// worker's slots together.
func spreadLocked(ws []*workerConn, need int) []*workerConn {
	n := make([]int, len(ws))
	taken := 0
	for i, w := range ws {
		n[i] = max(0, min(w.slots-w.used, need-taken))
		taken += n[i]
	}
	for i := 0; taken < need; i++ {
		n[i%len(ws)]++
		taken++
	}
	return takeLocked(ws, n)
}

// takeLocked takes n[i] slots of worker ws[i], the slots of each worker
// one after the other.
func takeLocked(ws []*workerConn, n []int) []*workerConn {
	var out []*workerConn
	for i, w := range ws {
		w.used += n[i]
		for range n[i] {
			out = append(out, w)
		}
	}
	return out
}

func (x *remoteExecutor) deploy() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	placement := x.placementLocked()
	for _, sh := range x.shares {
		d, err := x.deployMessage(sh, placement, x.spec.Restore)
		if err != nil {
			return err
		}
		if !sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Deploy{Deploy: d}}) {
			return fmt.Errorf("deploying on worker %s: the worker is gone", sh.w.id)
		}
	}
	return nil
}

// placementLocked says where every subtask of the attempt and every
// active standby runs (placement.go).
func (x *remoteExecutor) placementLocked() []*pb.PlacementRun {
	return append(placementRuns(x.where, false), placementRuns(x.standbyAt, true)...)
}

// deployMessage is the Deploy of share sh, which restores its subtasks
// from checkpoint m (nil: none).
func (x *remoteExecutor) deployMessage(sh *share, placement []*pb.PlacementRun, m *store.Metadata) (*pb.Deploy, error) {
	o := x.spec.Options
	d := &pb.Deploy{Key: sh.key, Job: x.job.job, Name: x.job.id, Args: x.job.args, Placement: placement,
		Fingerprint: x.cfg.Fingerprint, CheckpointMode: int32(o.Checkpoint),
		AlignedTimeoutNs: int64(o.AlignedTimeout), Attempt: int32(o.Attempt),
		UpstreamBackup: o.UpstreamBackup, RetainLimit: o.RetainLimit,
		ActiveStandby: o.ActiveStandby && len(x.standbyAt) > 0, StandbyShare: sh.standbys, InjectFailures: o.Inject != nil,
		Parallelism: taskParallelism(x.plan)}
	sh.ships = d.ActiveStandby && !d.StandbyShare
	where := x.where
	if d.StandbyShare {
		where = x.standbyAt
	}
	var ids []dataflow.SubtaskID
	for id, s := range where {
		if s == sh {
			ids = append(ids, id)
			d.Subtasks = append(d.Subtasks, ref(id))
		}
	}
	restore, err := shareRestore(m, x.plan, x.cfg.AllowNonRestoredState, ids)
	if err != nil {
		return nil, fmt.Errorf("encoding the checkpoint to restore: %w", err)
	}
	d.Restore = restore
	return d, nil
}

// release gives the attempt's slots back and stops routing its messages.
func (x *remoteExecutor) release() {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return
	}
	x.closed = true
	x.mu.Unlock()
	if x.job != nil {
		x.job.dropExecutor(x)
	}
	c := x.c
	x.mu.Lock()
	shares := slices.Clone(x.shares)
	used := map[*share]int{}
	for _, sh := range shares {
		used[sh] = x.slotsOnLocked(sh)
	}
	x.mu.Unlock()
	c.mu.Lock()
	for _, sh := range shares {
		delete(c.executors, sh.key)
		sh.w.used -= used[sh]
		sh.w.mu.Lock()
		delete(sh.w.metrics, sh.key)
		delete(sh.w.records, sh.key)
		sh.w.mu.Unlock()
	}
	c.notifyLocked()
	c.mu.Unlock()
}

// workerLost ends the shares of worker w: under fine-grained failover
// with upstream backup each of their subtasks failed alone; otherwise
// the attempt failed.
func (x *remoteExecutor) workerLost(w *workerConn, reason string) {
	err := fmt.Errorf("worker %s lost: %s", w.id, reason)
	x.mu.Lock()
	var lost []*share
	for _, sh := range x.shares {
		if sh.w == w && !sh.ended {
			sh.lost = true
			lost = append(lost, sh)
		}
	}
	var failed []dataflow.SubtaskID
	alone := x.spec.Options.UpstreamBackup && !x.failed
	if alone {
		for id, sh := range x.where {
			if sh.lost {
				failed = append(failed, id)
			}
		}
	}
	x.mu.Unlock()
	for _, sh := range lost {
		if alone {
			x.post(endEvent{sh, nil})
		} else {
			x.post(endEvent{sh, err})
		}
	}
	slices.SortFunc(failed, func(a, b dataflow.SubtaskID) int {
		return cmp.Or(cmp.Compare(a.Vertex, b.Vertex), cmp.Compare(a.Subtask, b.Subtask))
	})
	if h, ok := x.spec.Options.Host.(engine.FailedTogether); ok && len(failed) > 0 {
		x.wg.Add(1)
		go func() { // waits for the engine, or for the attempt's end
			defer x.wg.Done()
			h.FailedTogether(failed, err)
		}()
		return
	}
	for _, id := range failed {
		x.subtaskFailed(id, err)
	}
}

func (x *remoteExecutor) post(ev endEvent) {
	select {
	case x.events <- ev:
	default: // Run has enough to decide; more ends change nothing
	}
}

// shareOf returns worker w's share under key.
func (x *remoteExecutor) shareOf(w *workerConn, key string) *share {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.shareOfLocked(w, key)
}

// shareOfLocked is shareOf with x.mu held.
func (x *remoteExecutor) shareOfLocked(w *workerConn, key string) *share {
	for _, sh := range x.shares {
		if sh.key == key && sh.w == w {
			return sh
		}
	}
	return nil
}

func (x *remoteExecutor) onMessage(w *workerConn, m *pb.WorkerMessage) {
	switch v := m.Msg.(type) {
	case *pb.WorkerMessage_Snapshot:
		if x.spec.OnSnapshot == nil {
			return
		}
		s := v.Snapshot
		snap := engine.Snapshot{Result: task.SnapshotResult{Subtask: sid(s.Subtask), Checkpoint: s.Checkpoint,
			Alignment: time.Duration(s.AlignmentNs), Sync: time.Duration(s.SyncNs)}}
		if s.Error != "" {
			snap.Err = errors.New(s.Error)
			if s.NotReady {
				snap.Err = notReadyError{snap.Err}
			}
		} else if err := json.Unmarshal(s.Handle, &snap.Handle); err != nil {
			snap.Err = fmt.Errorf("worker %s sent a bad state handle: %w", w.id, err)
		}
		for _, ch := range s.Channels {
			snap.Result.Channels = append(snap.Result.Channels, task.ChannelCount{
				Channel: dataflow.Channel{Edge: int(ch.Edge), From: int(ch.From), To: int(ch.To)}, N: ch.N, Sender: ch.Sender})
		}
		x.spec.OnSnapshot(snap)
	case *pb.WorkerMessage_Finished:
		id := sid(v.Finished.Subtask)
		if !x.noteFinished(w, v.Finished.Key, id) {
			x.c.cfg.Log(fmt.Sprintf("job %s: ignoring the end of subtask %s on worker %s: it was reported before the subtask's stop took effect, so it is the stopped incarnation's", x.job.id, id, w.id))
			return
		}
		if x.spec.OnFinished != nil {
			x.spec.OnFinished(id)
		}
	case *pb.WorkerMessage_Ended:
		var err error
		if e := v.Ended; e.Error != "" {
			err = remoteFailure(w.id, e.Error, e.Class, e.CorruptCheckpoint)
		}
		if sh := x.shareOf(w, v.Ended.Key); sh != nil {
			x.post(endEvent{sh, err})
		}
	case *pb.WorkerMessage_Inject:
		x.answerInject(w, v.Inject)
	case *pb.WorkerMessage_Waits:
		x.answerWaits(v.Waits)
	default:
		x.onRestartMessage(w, m)
	}
}

// Run waits until every worker's share ended. The first failure cancels
// the others' shares; Run returns once they ended or were lost.
func (x *remoteExecutor) Run(ctx context.Context) error {
	defer x.release()
	defer x.wg.Wait()
	var first error
	cancelled := false
	for !x.allEnded() {
		select {
		case ev := <-x.events:
			x.mu.Lock()
			again := ev.sh != nil // nil: a failure of the attempt as a whole
			if sh := ev.sh; sh != nil && !sh.ended {
				sh.ended, again = true, false
				close(sh.done)
			}
			if ev.sh != nil && ev.sh.dismissed {
				ev.err = nil // cancelled, as it had nothing left to do
			}
			if ev.err != nil {
				x.failLocked()
			} else {
				x.dismissStandbysLocked()
			}
			x.mu.Unlock()
			if !again && ev.err != nil && first == nil {
				first = ev.err
				x.cancelAll()
				cancelled = true
			}
		case <-ctx.Done():
			x.mu.Lock()
			x.failLocked()
			x.mu.Unlock()
			if x.c.ctx.Err() != nil {
				// The coordinator stops leading: the shares run on for
				// its successor to adopt (ha.go), and no end of theirs
				// will reach this one.
				return ctx.Err()
			}
			if !cancelled {
				x.cancelAll()
				cancelled = true
			}
			ctx = context.Background() // keep waiting for the shares to end
		}
	}
	if first != nil {
		return first
	}
	if cancelled {
		return context.Canceled
	}
	return nil
}

// failLocked marks the attempt failed or cancelled: nothing restarts any
// more, and the restarts in flight stop (untilHalted), for Run waits for
// them before it returns.
func (x *remoteExecutor) failLocked() {
	if !x.failed {
		x.failed = true
		close(x.halted)
	}
}

// allEnded reports whether every share ended and, unless the attempt
// failed, no subtask of a lost worker waits for its restart.
func (x *remoteExecutor) allEnded() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, sh := range x.shares {
		if !sh.ended {
			return false
		}
	}
	if !x.failed {
		for _, sh := range x.where {
			if sh.lost {
				return false
			}
		}
	}
	return true
}

// cancelAll cancels every share, also the successor shares of a live
// rescale that were deployed but not started: Run waits for their end.
func (x *remoteExecutor) cancelAll() { x.send(&pb.Command{Kind: pb.Command_CANCEL}, true) }

// broadcast sends cmd to every live share.
func (x *remoteExecutor) broadcast(cmd *pb.Command) { x.send(cmd, false) }

func (x *remoteExecutor) send(cmd *pb.Command, successors bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, sh := range x.shares {
		if !sh.ended && (sh.live || successors && sh.successor) {
			c := proto.Clone(cmd).(*pb.Command)
			c.Key = sh.key
			sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: c}})
		}
	}
}

// command sends cmd to the share that runs subtask id, if it runs.
func (x *remoteExecutor) command(id dataflow.SubtaskID, cmd *pb.Command) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.commandLocked(id, cmd)
}

// commandLocked is command with x.mu held; it returns the share the
// command was posted to, or nil.
func (x *remoteExecutor) commandLocked(id dataflow.SubtaskID, cmd *pb.Command) *share {
	sh := x.where[id]
	if sh == nil || sh.ended || !sh.live {
		return nil
	}
	cmd.Key = sh.key
	if !sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: cmd}}) {
		return nil
	}
	return sh
}

// Kill fails the attempt as subtask id's failure (under upstream backup,
// subtask id alone).
func (x *remoteExecutor) Kill(id dataflow.SubtaskID, err error) {
	x.command(id, &pb.Command{Kind: pb.Command_KILL, Subtask: ref(id), Error: err.Error()})
}

// Trigger starts checkpoint id on every worker of the attempt, unless
// the coordinator was superseded: the sinks' pre-commits of a deposed
// coordinator's workers could meet the newer coordinator's in the output.
func (x *remoteExecutor) Trigger(id int64, how task.TriggerOptions) {
	if x.superseded() {
		return
	}
	x.mu.Lock()
	x.lastTrigger = max(x.lastTrigger, id)
	x.mu.Unlock()
	x.broadcast(&pb.Command{Kind: pb.Command_TRIGGER, Checkpoint: id, Aligned: how.Aligned, Drain: how.Drain})
}

// TriggerSubtask asks the worker of sid to checkpoint it directly.
func (x *remoteExecutor) TriggerSubtask(sid dataflow.SubtaskID, id int64) {
	if x.superseded() {
		return
	}
	x.command(sid, &pb.Command{Kind: pb.Command_TRIGGER_SUBTASK, Subtask: ref(sid), Checkpoint: id})
}

// Complete tells every worker that checkpoint id completed: their sinks
// commit it. The engine calls it after the fenced commit of the
// checkpoint passed its checks; a coordinator deposed since sends nothing.
func (x *remoteExecutor) Complete(id int64) {
	if err := x.c.Deposed(); err != nil {
		x.c.cfg.Log(fmt.Sprintf("job %s: not ordering the commit of checkpoint %d: %v", x.job.id, id, err))
		return
	}
	x.broadcast(&pb.Command{Kind: pb.Command_COMPLETE, Checkpoint: id})
}

// superseded checks the leadership before a trigger. It reports true only
// if the coordinator is deposed: a store that does not answer delays no
// checkpoint, whose commit is fenced anyway.
func (x *remoteExecutor) superseded() bool {
	return errors.Is(leaderFence{x.c}.Check(context.Background()), ErrDeposed)
}

// Abort tells every worker that checkpoint id was aborted.
func (x *remoteExecutor) Abort(id int64) {
	x.broadcast(&pb.Command{Kind: pb.Command_ABORT, Checkpoint: id})
}

// Release lets the finished subtasks exit.
func (x *remoteExecutor) Release() { x.broadcast(&pb.Command{Kind: pb.Command_RELEASE}) }

var _ engine.Executor = (*remoteExecutor)(nil)

// notReadyError is a worker's snapshot error that declines a checkpoint
// without counting as a failure (task.ErrCatchingUp on the worker).
type notReadyError struct{ error }

func (e notReadyError) Is(target error) bool { return target == task.ErrCatchingUp }
func (e notReadyError) Unwrap() error        { return e.error }
