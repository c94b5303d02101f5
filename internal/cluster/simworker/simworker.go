// Package simworker simulates weir workers, to measure what a coordinator
// costs with thousands of subtasks without running them.
//
// A simulated worker holds a real session with a coordinator over gRPC
// (pb.Coordinator.Connect) and speaks the worker protocol as a worker
// process does: it says hello with its slots, sends heartbeats at the
// interval the coordinator's welcome names, with the counters of every
// subtask it runs, takes the shares of attempts the coordinator deploys,
// acknowledges each checkpoint the coordinator triggers once for every
// subtask of the share, as a task that stored its snapshot would (it
// writes a small state blob to the checkpoint store and sends its
// handle), and reports the end of a share the coordinator cancels. It
// runs no operators: the coordinator does all its own work (bookkeeping,
// metadata written to its store and verified, old checkpoints deleted,
// notifications) and the workers cost little, so that the coordinator's
// cost can be measured apart from theirs.
//
// Every worker notes when things happened (a Log): when it had sent its
// last acknowledgement of a checkpoint, when the checkpoint's completion
// reached it, when a share was deployed or cancelled. A benchmark reads
// the logs of all its workers to tell how long the coordinator took.
package simworker

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// Config describes a simulated worker.
type Config struct {
	// ID names the worker; Coordinator is the coordinator's address.
	ID, Coordinator string
	// Slots is how many subtasks of each task the worker takes.
	Slots int
	// Store is the directory of the job's checkpoint store (the
	// coordinator's): each acknowledgement's state is a blob of StateSize
	// bytes there (default 64), which the coordinator verifies when it
	// loads the checkpoint and deletes when it retains newer ones.
	Store     string
	StateSize int
}

// Worker is a simulated worker. Start it with Start; it runs until Kill
// or the context given to Start ends, and Wait waits for that.
type Worker struct {
	cfg    Config
	log    *Log
	store  *store.Checkpoints
	state  []byte
	cancel context.CancelFunc
	done   chan struct{}
	err    error // Run's, set before done closes

	mu     sync.Mutex
	shares map[string]*share // by key
}

// share is the worker's share of an attempt: the subtasks it runs.
type share struct {
	key      string
	job      string
	subtasks []*pb.SubtaskRef
}

// outgoing is a message to the coordinator; last, if set, is the
// checkpoint whose last acknowledgement from this worker it is.
type outgoing struct {
	m    *pb.WorkerMessage
	last int64
}

// Start connects a worker to its coordinator and runs its session on a
// goroutine of its own, which Kill or the end of ctx stops. The worker's
// events go to log.
func Start(ctx context.Context, cfg Config, log *Log) *Worker {
	if cfg.Slots <= 0 {
		cfg.Slots = 1
	}
	if cfg.StateSize <= 0 {
		cfg.StateSize = 64
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Worker{cfg: cfg, log: log, cancel: cancel, done: make(chan struct{}), shares: map[string]*share{},
		store: store.New(unsyncedDir{blob.Dir(cfg.Store)}), state: make([]byte, cfg.StateSize)}
	go func() {
		defer close(w.done)
		w.err = w.run(ctx)
		if w.err != nil {
			w.log.note(Event{Kind: Ended, Worker: w.cfg.ID, Err: w.err})
		}
	}()
	return w
}

// ID returns the worker's id.
func (w *Worker) ID() string { return w.cfg.ID }

// Kill ends the worker's session as a crash of its process would: its
// connection closes at once, and it says nothing more. It returns when
// the session ended, after the log noted the kill.
func (w *Worker) Kill() {
	w.log.note(Event{Kind: Killed, Worker: w.cfg.ID})
	w.cancel()
	<-w.done
}

// Wait waits for the worker's session to end and returns why it ended:
// nil when it was killed or its context ended, else the session's error
// (the coordinator refused it or closed the session).
func (w *Worker) Wait() error {
	<-w.done
	return w.err
}

// run is the worker's session: hello, welcome, then a receiving goroutine
// while this one sends the worker's messages and heartbeats. gRPC allows
// one sender per stream, and this is it.
func (w *Worker) run(ctx context.Context) error {
	conn, err := cluster.Security{}.Dial(w.cfg.Coordinator)
	if err != nil {
		return err
	}
	defer conn.Close() // the kill: the coordinator sees the connection close
	stream, err := pb.NewCoordinatorClient(conn).Connect(ctx)
	if err != nil {
		return quiet(ctx, err)
	}
	hello := &pb.Hello{WorkerId: w.cfg.ID, DataAddr: "sim-" + w.cfg.ID + ":0", Slots: int32(w.cfg.Slots), Instance: w.cfg.ID}
	if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Hello{Hello: hello}}); err != nil {
		return quiet(ctx, err)
	}
	first, err := stream.Recv()
	if err != nil {
		return quiet(ctx, err)
	}
	welcome := first.GetWelcome()
	if welcome == nil {
		return errors.New("the coordinator did not welcome the worker")
	}
	w.log.note(Event{Kind: Joined, Worker: w.cfg.ID})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make(chan outgoing, 4096)
	recvErr := make(chan error, 1)
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel and the connection's close: Recv returns
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			m, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			w.handle(ctx, m, out, &wg)
		}
	}()
	interval := time.Duration(welcome.HeartbeatIntervalNs)
	if interval <= 0 {
		interval = time.Second
	}
	beat := time.NewTicker(interval)
	defer beat.Stop()
	for {
		var o outgoing
		select {
		case <-ctx.Done():
			return nil
		case err := <-recvErr:
			return quiet(ctx, err)
		case o = <-out:
		case <-beat.C:
			o.m = &pb.WorkerMessage{Msg: &pb.WorkerMessage_Heartbeat{Heartbeat: w.heartbeat()}}
		}
		if err := stream.Send(o.m); err != nil {
			return quiet(ctx, err)
		}
		if o.last != 0 {
			w.log.note(Event{Kind: Acked, Worker: w.cfg.ID, Checkpoint: o.last})
		}
	}
}

// quiet returns nil for the error of a session that ended because its
// context did (a kill), else err.
func quiet(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// handle acts on a message from the coordinator, queueing the answers on
// out; it blocks while out is full, as a worker's agent does. The
// snapshots of a checkpoint are written and acknowledged on a goroutine
// of their own (added to wg), as a task writes its state asynchronously:
// the commands that follow a trigger (a cancellation) do not wait for
// the writes.
func (w *Worker) handle(ctx context.Context, m *pb.CoordinatorMessage, out chan<- outgoing, wg *sync.WaitGroup) {
	send := func(o outgoing) {
		select {
		case out <- o:
		case <-ctx.Done():
		}
	}
	switch x := m.Msg.(type) {
	case *pb.CoordinatorMessage_Deploy:
		d := x.Deploy
		w.mu.Lock()
		w.shares[d.Key] = &share{key: d.Key, job: d.Name, subtasks: d.Subtasks}
		w.mu.Unlock()
		w.log.note(Event{Kind: Deployed, Worker: w.cfg.ID, Key: d.Key, Bytes: proto.Size(d)})
	case *pb.CoordinatorMessage_Command:
		c := x.Command
		w.mu.Lock()
		sh := w.shares[c.Key]
		if c.Kind == pb.Command_CANCEL {
			delete(w.shares, c.Key)
		}
		w.mu.Unlock()
		if sh == nil {
			return
		}
		switch c.Kind {
		case pb.Command_TRIGGER:
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i, s := range sh.subtasks {
					o := outgoing{m: &pb.WorkerMessage{Msg: &pb.WorkerMessage_Snapshot{Snapshot: w.snapshot(ctx, sh, c.Checkpoint, s)}}}
					if i == len(sh.subtasks)-1 {
						o.last = c.Checkpoint
					}
					send(o)
				}
			}()
		case pb.Command_COMPLETE:
			w.log.note(Event{Kind: Completed, Worker: w.cfg.ID, Key: c.Key, Checkpoint: c.Checkpoint})
		case pb.Command_ABORT:
			w.log.note(Event{Kind: Aborted, Worker: w.cfg.ID, Key: c.Key, Checkpoint: c.Checkpoint})
		case pb.Command_CANCEL:
			w.log.note(Event{Kind: Cancelled, Worker: w.cfg.ID, Key: c.Key})
			// The share's tasks stop at once: it ended, as a real share
			// whose run returns on its cancelled context.
			send(outgoing{m: &pb.WorkerMessage{Msg: &pb.WorkerMessage_Ended{Ended: &pb.AttemptEnded{Key: c.Key, Error: context.Canceled.Error()}}}})
		}
	}
}

// snapshot stores subtask s's state for checkpoint id and returns its
// acknowledgement, or the error that declines the checkpoint.
func (w *Worker) snapshot(ctx context.Context, sh *share, id int64, s *pb.SubtaskRef) *pb.SnapshotDone {
	out := &pb.SnapshotDone{Key: sh.key, Checkpoint: id, Subtask: s, AlignmentNs: 1000, SyncNs: 1000}
	h, err := w.store.WriteState(ctx, sh.job, uint64(id), dataflow.SubtaskID{Vertex: int(s.Vertex), Subtask: int(s.Subtask)}, w.state)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	out.Handle, _ = json.Marshal(h)
	return out
}

// unsyncedDir is the store's directory as the simulated workers write
// it: a blob is written to a temporary file and renamed into place, but
// not synced to disk, for the cost of the workers' disk is not what a
// simulation measures (and 10,000 fsyncs a second would slow the
// coordinator's own writes on the same disk).
type unsyncedDir struct{ *blob.DirStore }

func (d unsyncedDir) Put(_ context.Context, key string, data []byte) error {
	p := filepath.Join(d.Root(), filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".sim")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// heartbeat reports the counters of every subtask of every share, as a
// worker's heartbeat does (their values are made up, their size is not).
func (w *Worker) heartbeat() *pb.Heartbeat {
	w.mu.Lock()
	defer w.mu.Unlock()
	hb := &pb.Heartbeat{}
	now := time.Now().UnixNano()
	for _, sh := range w.shares {
		a := &pb.AttemptMetrics{Key: sh.key, Read: now % 1_000_000, Written: now % 1_000_000, FirstWriteUnixNs: now}
		for _, s := range sh.subtasks {
			counts := make([]int64, len(task.LatencyBuckets)+1)
			counts[3] = 100
			a.Subtasks = append(a.Subtasks, &pb.SubtaskCounts{Subtask: s, RecordsIn: now % 1_000_000, RecordsOut: now % 1_000_000,
				BytesOut: now % 10_000_000, Watermark: now / 1e6, QueueFill: 0.25, IdleNs: now % 1e9, BusyNs: now % 1e9,
				Latency: &pb.LatencyHistogram{Counts: counts, SumNs: 100_000}})
		}
		hb.Attempts = append(hb.Attempts, a)
	}
	return hb
}
