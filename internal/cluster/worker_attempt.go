package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// workerAttempt is a worker's share of one attempt. Its run goroutine owns
// the runtime: it applies the coordinator's commands in order, so a
// command that arrives while the attempt is still restoring waits.
type workerAttempt struct {
	g      *agent
	d      *pb.Deploy
	cmds   chan *pb.Command
	failed chan error // see fail

	mu   sync.Mutex
	rt   *task.Runtime
	halt context.CancelFunc // cancels the attempt's run

	// Its coordinator (agent.go): epoch is the one that deployed or
	// adopted it, and orders to commit from older ones are refused;
	// while unclaimed (no coordinator adopted it since its session was
	// lost) its reports wait in pending. expired marks an attempt its
	// grace ran out for (guarded by agent.mu).
	postMu      sync.Mutex
	claimed     bool
	pending     []*pb.WorkerMessage
	epoch       atomic.Uint64
	lastTrigger atomic.Int64 // the newest checkpoint triggered
	expired     bool

	// finMu orders the reports of finished subtasks with STOP commands
	// (reportFinished).
	finMu sync.Mutex

	// Set by run before it applies commands.
	cfg      engine.Config
	opts     task.Options
	ep       *transportEndpoint
	reshaped bool // its plan's parallelism differs from what the job's arguments build
	// takes, in a successor share that takes its state in memory
	// (Deploy.reshape_from), is closed once rt exists and expects it, or
	// once the share gave up before (rt nil) (worker_reshape.go).
	takes    chan struct{}
	takeOnce sync.Once
	bg       sync.WaitGroup // restarts in progress (restart_worker.go)

	// Where each subtask runs: its worker's data address and endpoint
	// key, changed by MOVE.
	placeMu   sync.Mutex
	addr      map[dataflow.SubtaskID]string
	keys      map[dataflow.SubtaskID]string
	standbyAt map[dataflow.SubtaskID]*pb.Placement // where active standbys run

	shippers map[dataflow.SubtaskID]*shipper // of input logs, by the run goroutine (active_standby_worker.go)
}

func newWorkerAttempt(g *agent, d *pb.Deploy, epoch uint64) *workerAttempt {
	a := &workerAttempt{g: g, d: d, cmds: make(chan *pb.Command, 4096), failed: make(chan error, 1), claimed: true}
	a.epoch.Store(epoch)
	if len(d.ReshapeFrom) > 0 {
		a.takes = make(chan struct{})
	}
	return a
}

// fail ends the share with err, as a failure of the attempt: for what
// goes wrong with the share itself rather than with one subtask (a
// restart whose state cannot be read). The first error counts.
func (a *workerAttempt) fail(err error) {
	select {
	case a.failed <- err:
	default:
	}
}

// command queues a command; the attempt fails if it cannot keep up.
func (a *workerAttempt) command(c *pb.Command) {
	select {
	case a.cmds <- c:
	default:
		a.mu.Lock()
		rt := a.rt
		a.mu.Unlock()
		if rt != nil {
			rt.Kill(dataflow.SubtaskID{}, errors.New("the worker's command queue overflowed"))
		}
	}
}

// metrics returns the attempt's counters for a heartbeat: the records
// read by local sources and written by local sinks, when the sinks wrote
// their first record, and each local subtask's records in and out.
func (a *workerAttempt) metrics() *pb.AttemptMetrics {
	a.mu.Lock()
	rt := a.rt
	a.mu.Unlock()
	out := &pb.AttemptMetrics{Key: a.d.Key}
	if rt == nil {
		return out
	}
	var read, written, firstWrite int64
	for _, v := range rt.Plan().Vertices {
		for i := range v.Parallelism {
			id := dataflow.SubtaskID{Vertex: v.ID, Subtask: i}
			if !rt.IsLocal(id) || rt.Retired(id) {
				continue
			}
			m := rt.Metrics(v.ID, i)
			out.Subtasks = append(out.Subtasks, localSubtaskCounts(rt, id))
			written += m.Written.Load()
			if t := m.FirstWrite.Load(); t != 0 && (firstWrite == 0 || t < firstWrite) {
				firstWrite = t
			}
			if len(v.Inputs) == 0 {
				read += m.RecordsIn.Load()
			}
		}
	}
	out.Read, out.Written, out.FirstWriteUnixNs = read, written, firstWrite
	return out
}

// placeAll records where every subtask and standby runs, as the
// deployment's placement says.
func (a *workerAttempt) placeAll(runs []*pb.PlacementRun) {
	a.addr, a.keys, a.standbyAt = map[dataflow.SubtaskID]string{}, map[dataflow.SubtaskID]string{}, map[dataflow.SubtaskID]*pb.Placement{}
	for _, pl := range expandPlacement(runs) {
		a.place(pl)
	}
}

// place records where a subtask runs.
func (a *workerAttempt) place(pl *pb.Placement) {
	a.placeMu.Lock()
	defer a.placeMu.Unlock()
	if pl.Standby {
		a.standbyAt[sid(pl.Subtask)] = pl
		return
	}
	a.addr[sid(pl.Subtask)] = pl.DataAddr
	a.keys[sid(pl.Subtask)] = cmp.Or(pl.DataKey, a.d.Key)
}

func ref(id dataflow.SubtaskID) *pb.SubtaskRef {
	return &pb.SubtaskRef{Vertex: int32(id.Vertex), Subtask: int32(id.Subtask)}
}

func sid(r *pb.SubtaskRef) dataflow.SubtaskID {
	return dataflow.SubtaskID{Vertex: int(r.GetVertex()), Subtask: int(r.GetSubtask())}
}

// run builds the attempt's pipeline, restores the local subtasks' state
// and runs them until they finish, fail, or the coordinator cancels.
func (a *workerAttempt) run() error {
	if a.takes != nil {
		defer a.tookOver() // should it end before its runtime exists
	}
	ctx, cancel := context.WithCancel(a.g.ctx)
	defer cancel()
	a.mu.Lock()
	a.halt = cancel
	a.mu.Unlock()
	w, d := a.g.w, a.d
	if w.cfg.Program == nil {
		return errors.New("this worker runs no program")
	}
	p, err := w.cfg.Program.Open(ctx, d.Job, d.Name, d.Args)
	if err != nil {
		return fmt.Errorf("building job %s: %w", d.Job, err)
	}
	cfg, err := p.Compile(ctx)
	if err != nil {
		return fmt.Errorf("building job %s: %w", d.Job, err)
	}
	if fp := engine.Fingerprint(cfg.Plan); fp != d.Fingerprint {
		return fmt.Errorf("job %s builds a different plan here (fingerprint %s, the coordinator's %s): do all processes run the same program?", d.Job, fp, d.Fingerprint)
	}
	if err := a.changeParallelism(&cfg, d.Parallelism); err != nil {
		return err
	}
	local := map[dataflow.SubtaskID]bool{}
	for _, r := range d.Subtasks {
		local[sid(r)] = true
	}
	a.placeAll(d.Placement)
	opts := cfg.Runtime
	opts.Checkpoint = task.CheckpointMode(d.CheckpointMode)
	opts.AlignedTimeout = time.Duration(d.AlignedTimeoutNs)
	opts.Attempt = int(d.Attempt)
	opts.Local = func(id dataflow.SubtaskID) bool { return local[id] }
	if d.InjectFailures {
		opts.Inject = a.g.injectHook(ctx, a)
	}
	a.cfg = cfg
	a.upstreamBackup(&opts)
	restoreStart, restored, from := time.Now(), 0, ""
	if len(d.Restore) > 0 {
		var m store.Metadata
		if err := json.Unmarshal(d.Restore, &m); err != nil {
			return fmt.Errorf("decoding the checkpoint to restore: %w", err)
		}
		state, cached, err := a.restoreState(ctx, cfg, &m, opts.Local)
		if err != nil {
			return err
		}
		if cached {
			from = " from the standby's memory"
		}
		opts.Restore, opts.Restored = state, int64(m.ID)
		for _, b := range state {
			restored += len(b)
		}
	}
	opts.Host = shareHost{a: a, ctx: ctx}
	var ep *transportEndpoint
	opts.Remote = func(to dataflow.SubtaskID, ch int) exchange.Sender {
		a.placeMu.Lock()
		addr, key := a.addr[to], a.keys[to]
		a.placeMu.Unlock()
		return ep.SenderTo(addr, key, to.Vertex, to.Subtask, ch)
	}
	a.opts = opts
	var rt *task.Runtime
	early := false // a successor that takes its state in memory: it runs at once
	if d.ReshapeAt != 0 {
		rt = task.NewSuccessor(cfg.Plan, opts, d.ReshapeAt)
		if early, err = a.expectHandOver(rt); err != nil {
			return err
		}
	} else {
		rt = task.New(cfg.Plan, opts)
	}
	ep, err = register(w.node, d.Key, rt)
	if err != nil {
		return err
	}
	defer ep.Close()
	if opts.UpstreamBackup {
		ep.SurviveLostPeers(stallGrace, func(chans [][3]int) { a.restartStalled(rt, chans) })
	}
	a.shippers = map[dataflow.SubtaskID]*shipper{}
	if opts.StandbyElsewhere {
		a.shipLogs(ctx, rt, ep, opts.Restored)
	}
	a.mu.Lock()
	a.rt, a.ep = rt, ep
	a.mu.Unlock()
	if a.takes != nil {
		a.tookOver()
	}

	done := make(chan error, 1)
	read := time.Since(restoreStart)
	decodeStart := time.Now()
	var decoded <-chan struct{}
	var started <-chan struct{} // a successor's, once RESHAPE_START started it
	var startToken int64
	halted := ctx.Done()
	running := d.ReshapeAt == 0 || early // Run runs: done receives its end
	var handedOver <-chan struct{}
	if running {
		go func() { done <- rt.Run(ctx) }()
		if len(d.Restore) > 0 {
			decoded = rt.Restored()
		}
		if early {
			handedOver = rt.Restored()
		}
	}
	what := fmt.Sprintf("restored %d bytes of state%s", restored, from)
	if d.Rejoin {
		what = fmt.Sprintf("restarted %d subtasks of a lost worker from %d bytes of state%s", len(d.Subtasks), restored, from)
	}
	rejoined := rt.Rejoined()
	for {
		select {
		case <-rejoined:
			rejoined = nil
			a.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Restarted{Restarted: &pb.Restarted{Key: d.Key, Token: d.Token}}})
			if len(d.Restore) == 0 {
				w.cfg.Log(fmt.Sprintf("attempt %s running: restarted %d subtasks of a lost worker from the beginning", d.Key, len(d.Subtasks)))
			}
		case <-decoded:
			decoded = nil
			// Logged once the tasks decoded the state: only then do they run.
			w.cfg.Log(fmt.Sprintf("attempt %s running: %s in %v (read %v, decoded %v)", d.Key, what,
				(read + time.Since(decodeStart)).Round(time.Millisecond), read.Round(time.Millisecond), time.Since(decodeStart).Round(time.Millisecond)))
		case <-handedOver:
			handedOver = nil
			w.cfg.Log(fmt.Sprintf("attempt %s running: the rescaled tasks took the state of checkpoint %d in memory in %v", d.Key, d.ReshapeAt, time.Since(decodeStart).Round(time.Millisecond)))
		case <-started:
			started = nil
			w.cfg.Log(fmt.Sprintf("attempt %s running: the rescaled tasks restored checkpoint %d in %v", d.Key, d.ReshapeAt, time.Since(decodeStart).Round(time.Millisecond)))
			a.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Restarted{Restarted: &pb.Restarted{Key: d.Key, Token: startToken}}})
		case err := <-done:
			cancel()
			a.bg.Wait()
			return err
		case err := <-a.failed:
			cancel()
			if running {
				<-done
			}
			a.bg.Wait()
			return err
		case <-halted:
			if !running {
				return ctx.Err() // cancelled before it started
			}
			halted = nil // Run ends by itself
		case c := <-a.cmds:
			if c.Kind == pb.Command_RESHAPE_START && d.ReshapeAt != 0 && startToken == 0 {
				if !early {
					decodeStart = time.Now()
					if err := a.startSuccessor(ctx, rt, c, done); err != nil {
						cancel()
						return err
					}
					running = true
				}
				startToken, started = c.Token, rt.Restored()
				continue
			}
			a.apply(ctx, rt, c, cancel)
		}
	}
}

func (a *workerAttempt) apply(ctx context.Context, rt *task.Runtime, c *pb.Command, cancel context.CancelFunc) {
	switch c.Kind {
	case pb.Command_TRIGGER:
		a.noteTrigger(c.Checkpoint)
		rt.Trigger(c.Checkpoint, triggerOptions(c))
	case pb.Command_TRIGGER_SUBTASK:
		a.noteTrigger(c.Checkpoint)
		if id := sid(c.Subtask); rt.IsLocal(id) {
			rt.TriggerSubtask(id, c.Checkpoint)
		}
	case pb.Command_COMPLETE:
		if newest, own := a.g.w.epoch.Load(), a.epoch.Load(); own < newest {
			a.g.w.cfg.Log(fmt.Sprintf("attempt %s: refusing to commit checkpoint %d: the order comes from coordinator epoch %d, superseded by epoch %d", a.d.Key, c.Checkpoint, own, newest))
			return
		}
		rt.Complete(c.Checkpoint)
	case pb.Command_ABORT:
		rt.Abort(c.Checkpoint)
	case pb.Command_RELEASE:
		rt.Release()
	case pb.Command_KILL:
		rt.Kill(sid(c.Subtask), errors.New(c.Error))
	case pb.Command_CANCEL:
		cancel()
	case pb.Command_RESHAPE:
		if err := a.prepareReshape(rt, c); err != nil {
			a.fail(err)
			return
		}
		// The coordinator triggers the rescale's checkpoint once every
		// running share answered.
		a.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Restarted{Restarted: &pb.Restarted{Key: a.d.Key, Token: c.Token}}})
	default:
		a.applyRestart(ctx, rt, c)
	}
}

// noteTrigger records that checkpoint id was triggered, for a coordinator
// that adopts the attempt (Hello.running).
func (a *workerAttempt) noteTrigger(id int64) {
	for {
		old := a.lastTrigger.Load()
		if id <= old || a.lastTrigger.CompareAndSwap(old, id) {
			return
		}
	}
}

// shareHost is the task.Host of a worker's share of an attempt: it
// posts the runtime's reports to the coordinator. It is told of no
// takeovers: a worker runs no local standbys, and the coordinator
// promotes the remote ones itself.
type shareHost struct {
	task.NopHost
	a   *workerAttempt
	ctx context.Context // the attempt's, for the store's writes
}

func (h shareHost) SnapshotTaken(r task.SnapshotResult) {
	snap := engine.StoreSnapshot(h.ctx, h.a.cfg.Store, h.a.cfg.Job, r)
	if snap.Err != nil && h.ctx.Err() != nil {
		// The attempt is being cancelled or its session lost: the
		// coordinator learns that from the attempt's end. Declining
		// would count as a checkpoint failure, which under fine-grained
		// failover could fail other regions too.
		return
	}
	h.a.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Snapshot{Snapshot: snapshotDone(h.a.d.Key, snap)}})
}

func (h shareHost) Finished(id dataflow.SubtaskID) {
	h.a.mu.Lock()
	rt := h.a.rt // set before the runtime runs its subtasks
	h.a.mu.Unlock()
	h.a.reportFinished(rt.Finished, id)
}

func (h shareHost) Failed(id dataflow.SubtaskID, err error) {
	h.a.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Failed{Failed: subtaskFailedReport(h.a.d.Key, id, err, false)}})
}

func (h shareHost) StandbyStopped(id dataflow.SubtaskID, err error) {
	h.a.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Failed{Failed: subtaskFailedReport(h.a.d.Key, id, err, true)}})
}

func snapshotDone(key string, s engine.Snapshot) *pb.SnapshotDone {
	r := s.Result
	out := &pb.SnapshotDone{Key: key, Checkpoint: r.Checkpoint, Subtask: ref(r.Subtask),
		AlignmentNs: int64(r.Alignment), SyncNs: int64(r.Sync)}
	if s.Err != nil {
		out.Error, out.NotReady = s.Err.Error(), errors.Is(s.Err, task.ErrCatchingUp)
		return out
	}
	out.Handle, _ = json.Marshal(s.Handle)
	for _, c := range r.Channels {
		out.Channels = append(out.Channels, &pb.ChannelCount{Edge: int32(c.Edge), From: int32(c.From), To: int32(c.To), N: c.N, Sender: c.Sender})
	}
	return out
}

// triggerOptions is how a TRIGGER command starts its checkpoint.
func triggerOptions(c *pb.Command) task.TriggerOptions {
	return task.TriggerOptions{Aligned: c.Aligned, Drain: c.Drain}
}
