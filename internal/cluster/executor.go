package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// remoteExecutor is one attempt of a job spread over workers: the
// engine's view of it (engine.Executor).
type remoteExecutor struct {
	c       *Coordinator
	job     *job
	key     string
	plan    *plan.Plan
	spec    engine.AttemptSpec
	where   map[task.SubtaskID]*workerConn
	workers []*workerConn // distinct, in placement order

	mu     sync.Mutex
	ended  map[string]bool // workers whose share ended
	events chan endEvent
	closed bool
}

type endEvent struct {
	worker string
	err    error
}

// deployer returns the job's engine.Deployer: it waits for enough free
// slots, places the subtasks and deploys each worker's share.
func (c *Coordinator) deployer(j *job, cfg engine.Config) engine.Deployer {
	attempts := 0
	return func(ctx context.Context, spec engine.AttemptSpec) (engine.Executor, error) {
		// The attempt runs the subtasks spec's Local accepts: all of them,
		// or one region's under fine-grained failover.
		want := func(id task.SubtaskID) bool { return spec.Options.Local == nil || spec.Options.Local(id) }
		need := 0
		for _, v := range cfg.Plan.Vertices {
			if want(task.SubtaskID{Vertex: v.ID}) {
				need = max(need, v.Parallelism)
			}
		}
		var slots []*workerConn
		// A restarted job that lacks slots waits for a replacement worker
		// for ReplacementTimeout, then spreads over the workers it has.
		var spread <-chan time.Time
		if spec.Options.Attempt > 0 && c.cfg.ReplacementTimeout >= 0 {
			t := time.NewTimer(c.cfg.ReplacementTimeout)
			defer t.Stop()
			spread = t.C
		}
		spreading := false
		for {
			c.mu.Lock()
			ws, free := c.freeSlotsLocked(spec.Options.Attempt > 0)
			if free >= need {
				slots = placeLocked(ws, need)
				c.mu.Unlock()
				break
			}
			if spreading && len(ws) > 0 {
				slots = spreadLocked(ws, need)
				c.mu.Unlock()
				c.cfg.Log(fmt.Sprintf("job %s: no replacement within %v; spreading its %d slots over %d workers with %d free", j.id, c.cfg.ReplacementTimeout, need, len(ws), free))
				break
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
		j.setDetail("")
		attempts++
		x := &remoteExecutor{c: c, key: fmt.Sprintf("%s/%d.%d", j.id, c.epoch, attempts), plan: cfg.Plan, spec: spec,
			where: map[task.SubtaskID]*workerConn{}, ended: map[string]bool{}, events: make(chan endEvent, 64)}
		seen := map[*workerConn]bool{}
		for _, v := range cfg.Plan.Vertices {
			for i := range v.Parallelism {
				if !want(task.SubtaskID{Vertex: v.ID, Subtask: i}) {
					continue
				}
				w := slots[i]
				x.where[task.SubtaskID{Vertex: v.ID, Subtask: i}] = w
				if !seen[w] {
					seen[w] = true
					x.workers = append(x.workers, w)
				}
			}
		}
		c.mu.Lock()
		c.executors[x.key] = x
		c.mu.Unlock()
		x.job = j
		j.setPlacement(x)
		if err := x.deploy(j, cfg); err != nil {
			x.release()
			return nil, err
		}
		return x, nil
	}
}

// placeLocked takes need slots, one at a time from each worker in turn,
// so that an attempt spreads over the workers. Slot i holds subtask i of
// every operator (slot sharing).
func placeLocked(ws []*workerConn, need int) []*workerConn {
	var out []*workerConn
	for len(out) < need {
		for _, w := range ws {
			if w.used < w.slots && len(out) < need {
				w.used++
				out = append(out, w)
			}
		}
	}
	return out
}

// spreadLocked takes need slots where there are fewer free: first the
// free ones, then more on the workers in turn beyond their slots, so that
// the subtasks of a lost worker are spread over the survivors, which
// restore their shares in parallel.
func spreadLocked(ws []*workerConn, need int) []*workerConn {
	var out []*workerConn
	for _, w := range ws {
		for w.used < w.slots && len(out) < need {
			w.used++
			out = append(out, w)
		}
	}
	for i := 0; len(out) < need; i++ {
		w := ws[i%len(ws)]
		w.used++
		out = append(out, w)
	}
	return out
}

func (x *remoteExecutor) deploy(j *job, cfg engine.Config) error {
	var placement []*pb.Placement
	for id, w := range x.where {
		placement = append(placement, &pb.Placement{Subtask: ref(id), DataAddr: w.dataAddr})
	}
	var restore []byte
	if x.spec.Restore != nil {
		var err error
		if restore, err = json.Marshal(x.spec.Restore); err != nil {
			return err
		}
	}
	for _, w := range x.workers {
		d := &pb.Deploy{Key: x.key, Job: j.job, Name: j.id, Args: j.args, Placement: placement,
			Fingerprint: cfg.Fingerprint, CheckpointMode: int32(x.spec.Options.Checkpoint),
			AlignedTimeoutNs: int64(x.spec.Options.AlignedTimeout), Attempt: int32(x.spec.Options.Attempt), Restore: restore}
		for id, ww := range x.where {
			if ww == w {
				d.Subtasks = append(d.Subtasks, ref(id))
			}
		}
		if !w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Deploy{Deploy: d}}) {
			return fmt.Errorf("deploying on worker %s: the worker is gone", w.id)
		}
	}
	return nil
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
	c.mu.Lock()
	delete(c.executors, x.key)
	for _, w := range x.workers {
		w.used -= x.slotsOn(w)
		w.mu.Lock()
		delete(w.metrics, x.key)
		w.mu.Unlock()
	}
	c.notifyLocked()
	c.mu.Unlock()
}

// slotsOn counts the slots the attempt holds on w: the distinct subtask
// indexes placed there.
func (x *remoteExecutor) slotsOn(w *workerConn) int {
	idx := map[int]bool{}
	for id, ww := range x.where {
		if ww == w {
			idx[id.Subtask] = true
		}
	}
	return len(idx)
}

func (x *remoteExecutor) workerLost(w *workerConn, reason string) {
	for _, ww := range x.workers {
		if ww == w {
			x.post(endEvent{w.id, fmt.Errorf("worker %s lost: %s", w.id, reason)})
			return
		}
	}
}

func (x *remoteExecutor) post(ev endEvent) {
	select {
	case x.events <- ev:
	default: // Run has enough to decide; more ends change nothing
	}
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
		} else if err := json.Unmarshal(s.Handle, &snap.Handle); err != nil {
			snap.Err = fmt.Errorf("worker %s sent a bad state handle: %w", w.id, err)
		}
		for _, ch := range s.Channels {
			snap.Result.Channels = append(snap.Result.Channels, task.ChannelCount{
				Channel: task.Channel{Edge: int(ch.Edge), From: int(ch.From), To: int(ch.To)}, N: ch.N, Sender: ch.Sender})
		}
		x.spec.OnSnapshot(snap)
	case *pb.WorkerMessage_Finished:
		if x.spec.OnFinished != nil {
			x.spec.OnFinished(sid(v.Finished.Subtask))
		}
	case *pb.WorkerMessage_Ended:
		var err error
		if v.Ended.Error != "" {
			err = fmt.Errorf("on worker %s: %s", w.id, v.Ended.Error)
		}
		x.post(endEvent{w.id, err})
	}
}

// Run waits until every worker's share ended. The first failure cancels
// the others' shares; Run returns once they ended or were lost.
func (x *remoteExecutor) Run(ctx context.Context) error {
	defer x.release()
	var first error
	cancelled := false
	for !x.allEnded() {
		select {
		case ev := <-x.events:
			x.mu.Lock()
			again := x.ended[ev.worker]
			x.ended[ev.worker] = true
			x.mu.Unlock()
			if !again && ev.err != nil && first == nil {
				first = ev.err
				x.cancelAll()
				cancelled = true
			}
		case <-ctx.Done():
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

func (x *remoteExecutor) allEnded() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.ended) == len(x.workers)
}

func (x *remoteExecutor) cancelAll() { x.broadcast(&pb.Command{Kind: pb.Command_CANCEL}) }

func (x *remoteExecutor) broadcast(cmd *pb.Command) {
	cmd.Key = x.key
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, w := range x.workers {
		if !x.ended[w.id] {
			w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: cmd}})
		}
	}
}

// Kill fails the attempt as subtask id's failure.
func (x *remoteExecutor) Kill(id task.SubtaskID, err error) {
	if w := x.where[id]; w != nil {
		w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{Key: x.key,
			Kind: pb.Command_KILL, Subtask: ref(id), Error: err.Error()}}})
	}
}

// Trigger starts checkpoint id on every worker of the attempt.
func (x *remoteExecutor) Trigger(id int64) {
	x.broadcast(&pb.Command{Kind: pb.Command_TRIGGER, Checkpoint: id})
}

// TriggerSubtask asks the worker of sid to checkpoint it directly.
func (x *remoteExecutor) TriggerSubtask(sid task.SubtaskID, id int64) {
	if w := x.where[sid]; w != nil {
		w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{Key: x.key,
			Kind: pb.Command_TRIGGER_SUBTASK, Subtask: ref(sid), Checkpoint: id}}})
	}
}

// Complete tells every worker that checkpoint id completed.
func (x *remoteExecutor) Complete(id int64) {
	x.broadcast(&pb.Command{Kind: pb.Command_COMPLETE, Checkpoint: id})
}

// Abort tells every worker that checkpoint id was aborted.
func (x *remoteExecutor) Abort(id int64) {
	x.broadcast(&pb.Command{Kind: pb.Command_ABORT, Checkpoint: id})
}

// Release lets the finished subtasks exit.
func (x *remoteExecutor) Release() { x.broadcast(&pb.Command{Kind: pb.Command_RELEASE}) }

// Written sums the records the workers' sinks wrote, as of their latest
// heartbeats.
func (x *remoteExecutor) Written() int64 {
	_, n := x.counts()
	return n
}

// counts sums the records the attempt's sources read and its sinks wrote,
// as of the workers' latest heartbeats.
func (x *remoteExecutor) counts() (read, written int64) {
	for _, w := range x.workers {
		w.mu.Lock()
		if m := w.metrics[x.key]; m != nil {
			read += m.Read
			written += m.Written
		}
		w.mu.Unlock()
	}
	return read, written
}

// Completed sends the metadata of completed checkpoint m to the standby
// workers, which load its state.
func (x *remoteExecutor) Completed(m *store.Metadata) {
	if x.job == nil || m == nil {
		return
	}
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	c := x.c
	c.mu.Lock()
	var standbys []*workerConn
	for _, w := range c.workers {
		if w.standby {
			standbys = append(standbys, w)
		}
	}
	c.mu.Unlock()
	for _, w := range standbys {
		w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Prefetch{Prefetch: &pb.Prefetch{
			Name: x.job.id, Checkpoint: b, Job: x.job.job, Args: x.job.args}}})
	}
}

// FirstOutput returns when the attempt's sinks wrote their first record,
// as the workers reported it.
func (x *remoteExecutor) FirstOutput() time.Time {
	var first int64
	for _, w := range x.workers {
		w.mu.Lock()
		if m := w.metrics[x.key]; m != nil && m.FirstWriteUnixNs != 0 && (first == 0 || m.FirstWriteUnixNs < first) {
			first = m.FirstWriteUnixNs
		}
		w.mu.Unlock()
	}
	if first == 0 {
		return time.Time{}
	}
	return time.Unix(0, first)
}

// Positions is not supported in cluster mode (at-most-once is refused at
// submission).
func (x *remoteExecutor) Positions() map[task.SubtaskID][]byte { return nil }

var _ engine.Executor = (*remoteExecutor)(nil)
