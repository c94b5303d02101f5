package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/store"
)

// CoordinatorConfig configures a coordinator.
type CoordinatorConfig struct {
	// Listen is the address of the control plane (workers and clients).
	Listen string
	// Store is where checkpoints and job records go: a directory (shared
	// by all processes) or a URL that blob.Open accepts (s3://...). Jobs
	// without their own --state-dir checkpoint here.
	Store   string
	Program Program
	// HeartbeatInterval is how often workers report; a worker silent for
	// HeartbeatTimeout is lost. Defaults 500ms and 5s.
	HeartbeatInterval, HeartbeatTimeout time.Duration
	// ReplacementTimeout is how long a restarting job that lacks slots
	// (a worker was lost) waits for a new worker before it spreads over
	// the remaining ones, running more subtasks per slot (parallel
	// recovery). Negative: wait for slots however long it takes.
	ReplacementTimeout time.Duration
	Security           Security
	Log                func(string)
	// SavepointDir is where savepoints go when the Savepoint call names
	// no directory (empty: it must name one).
	SavepointDir string
	// Advertise is the address clients and workers reach the coordinator
	// at, which standbys name to them (default: the listening address).
	Advertise string
	// HA makes the coordinator start as a standby: it leads once the
	// lease of the coordinator leading the store expires or is handed
	// over (ha.go). Without it the coordinator claims the store at once.
	HA bool
	// LeasePeriod is how long a leader's lease holds without renewal: a
	// standby takes over a leader silent this long. Default 3s.
	LeasePeriod time.Duration
	// AdoptTimeout is how long a coordinator that took over waits for the
	// workers to report the attempts of a job they still run before it
	// gives up adopting them and restarts the job from its latest
	// checkpoint (adopt.go). Default twice HeartbeatTimeout.
	AdoptTimeout time.Duration
	// AutoRescaleDelay is how long a job with --parallelism auto waits
	// after workers joined or left, for no more to, before it rescales
	// (rescale_auto.go). Default 2s.
	AutoRescaleDelay time.Duration
}

// Coordinator places jobs on workers and drives their checkpoints.
type Coordinator struct {
	pb.UnimplementedCoordinatorServer
	cfg   CoordinatorConfig
	blobs blob.Store
	ln    net.Listener
	srv   *grpc.Server
	// lead is the coordinator's leadership epoch in the store (leader.go);
	// it also tells this coordinator's attempts from an earlier one's.
	lead *store.Leadership

	deposeOnce sync.Once
	endOnce    sync.Once
	deposed    chan struct{} // closed when the coordinator stopped (end)
	deposedErr error         // set before deposed closes

	// Leadership (ha.go): leading is set once the coordinator leads (and
	// lead is set), and leadingCh closed; a standby keeps the leader's
	// address and epoch as the lease says.
	leading     atomic.Bool
	leadingCh   chan struct{}
	leaderAddr  atomic.Value // string
	leaderEpoch atomic.Uint64
	renewals    atomic.Uint64
	renewed     time.Time // the lease's latest renewal; by watchLeadership

	admitMu   sync.Mutex            // one hello at a time (takeover.go)
	instances map[string]*instances // by worker id; guarded by admitMu

	mu        sync.Mutex
	workers   map[string]*workerConn
	changed   chan struct{} // closed and replaced when workers come or go
	executors map[string]*remoteExecutor
	jobs      map[string]*job
	lastJob   int
	// Adoption (adopt.go): the jobs that wait for the workers' reports of
	// their running attempts, and the reports, by job id.
	adopting map[string]bool
	offers   map[string][]offer

	ctx    context.Context
	cancel context.CancelFunc
	jobsWG sync.WaitGroup
	srvWG  sync.WaitGroup
}

// workerConn is a worker's session as the coordinator sees it.
type workerConn struct {
	c            *Coordinator
	id, dataAddr string
	slots        int
	passive      bool
	used         int // slots taken by attempts; guarded by Coordinator.mu
	out          chan *pb.CoordinatorMessage
	lost         chan struct{} // closed when the session ended
	takenOver    atomic.Bool   // a newer instance of the worker took its id over
	lastBeat     atomic.Int64  // unix nanos
	mu           sync.Mutex
	metrics      map[string]*pb.AttemptMetrics
	// records sums, per share key, the records the share's subtasks took
	// in and sent out as of metrics: computed once per heartbeat, for the
	// engine asks for it on every tick (remoteExecutor.Activity).
	records map[string]int64
}

// post queues a message for the worker without blocking; a worker too
// slow to take its messages is dropped (and so lost).
func (w *workerConn) post(m *pb.CoordinatorMessage) bool {
	select {
	case <-w.lost:
		return false
	default:
	}
	select {
	case w.out <- m:
		return true
	default:
		go w.c.lose(w, "its message queue overflowed")
		return false
	}
}

// NewCoordinator opens the store, resumes the jobs an earlier coordinator
// on the same store left running, and starts serving on cfg.Listen.
func NewCoordinator(ctx context.Context, cfg CoordinatorConfig) (*Coordinator, error) {
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = 500 * time.Millisecond
	}
	if cfg.HeartbeatTimeout <= 0 {
		cfg.HeartbeatTimeout = 5 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = func(string) {}
	}
	if cfg.LeasePeriod <= 0 {
		cfg.LeasePeriod = 3 * time.Second
	}
	if cfg.AdoptTimeout <= 0 {
		cfg.AdoptTimeout = 2 * cfg.HeartbeatTimeout
	}
	if cfg.Store == "" {
		return nil, errors.New("the coordinator needs a checkpoint store shared with the workers (--state-dir or --checkpoint-store)")
	}
	blobs, err := blob.Open(ctx, cfg.Store)
	if err != nil {
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	opts, err := cfg.Security.serverOptions()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", cfg.Listen, err)
	}
	if cfg.Advertise == "" {
		cfg.Advertise = ln.Addr().String()
	}
	cctx, cancel := context.WithCancel(context.Background())
	c := &Coordinator{cfg: cfg, blobs: blobs, ln: ln, deposed: make(chan struct{}), leadingCh: make(chan struct{}),
		instances: map[string]*instances{}, workers: map[string]*workerConn{}, changed: make(chan struct{}), executors: map[string]*remoteExecutor{},
		jobs: map[string]*job{}, adopting: map[string]bool{}, offers: map[string][]offer{}, ctx: cctx, cancel: cancel}
	c.srv = grpc.NewServer(append(opts, c.interceptors()...)...)
	pb.RegisterCoordinatorServer(c.srv, c)
	if !cfg.HA {
		// Claimed before anything is read: a coordinator still running on
		// the store commits nothing from now on, so the jobs resumed
		// start from the last checkpoint it could complete.
		lead, err := store.Lead(ctx, blobs, holder(cfg.Advertise))
		if err == nil {
			err = c.takeOver(ctx, lead)
		}
		if err != nil {
			cancel()
			c.jobsWG.Wait()
			c.srvWG.Wait()
			ln.Close()
			return nil, err
		}
	}
	c.srvWG.Add(1)
	go func() {
		defer c.srvWG.Done()
		c.srv.Serve(ln)
	}()
	if cfg.HA {
		c.srvWG.Add(1)
		go func() {
			defer c.srvWG.Done()
			c.awaitLeadership()
		}()
	}
	return c, nil
}

// Addr returns the control plane's address.
func (c *Coordinator) Addr() string { return c.ln.Addr().String() }

// Close stops serving and stops the jobs' goroutines, leaving their
// attempts running on the workers. The jobs stay recorded as running, so
// a coordinator started on the same store resumes them, adopting the
// attempts; a leader releases its lease, so that a standby takes over at
// once. A deposed coordinator must still be closed.
func (c *Coordinator) Close() {
	c.cancel()
	if c.leading.Load() && c.Deposed() == nil {
		c.jobsWG.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := c.lead.Renew(ctx, c.leaseRecord(true)); err != nil {
			c.cfg.Log(fmt.Sprintf("releasing the lease: %v; a standby takes over when it expires", err))
		}
		cancel()
	}
	// The sessions end on the cancel, with the reason for their workers
	// (a deposed coordinator's ABORTED); a call that does not return
	// within a second (a frozen client) is cut.
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		c.srv.GracefulStop()
	}()
	select {
	case <-stopped:
	case <-time.After(time.Second):
		c.srv.Stop()
		<-stopped
	}
	c.srvWG.Wait()
	c.jobsWG.Wait()
}

func (c *Coordinator) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Connect serves a worker's session.
func (c *Coordinator) Connect(stream pb.Coordinator_ConnectServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	if c.Deposed() != nil {
		return c.deposedStatus()
	}
	hello := first.GetHello()
	if hello == nil || hello.WorkerId == "" || hello.DataAddr == "" || hello.Slots < 1 {
		return status.Error(codes.InvalidArgument, "a worker's session must start with a hello naming the worker, its data address and at least one slot")
	}
	w := &workerConn{c: c, id: hello.WorkerId, dataAddr: hello.DataAddr, slots: int(hello.Slots), passive: hello.PassiveStandby,
		out: make(chan *pb.CoordinatorMessage, 4096), lost: make(chan struct{}), metrics: map[string]*pb.AttemptMetrics{}, records: map[string]int64{}}
	takeover, err := c.admit(stream.Context(), hello.WorkerId, hello.Instance)
	if err != nil {
		if status.Code(err) == codes.FailedPrecondition {
			c.cfg.Log(fmt.Sprintf("worker %s refused: a newer instance took its id over", hello.WorkerId))
		}
		return err
	}
	w.lastBeat.Store(time.Now().UnixNano())
	c.mu.Lock()
	old := c.workers[w.id]
	c.workers[w.id] = w
	c.mu.Unlock()
	switch {
	case old != nil && takeover:
		old.takenOver.Store(true)
		c.lose(old, "a newer instance of the worker took its id over")
	case old != nil:
		c.lose(old, "replaced by a new session of the same worker")
	case takeover:
		c.cfg.Log(fmt.Sprintf("worker %s: a newer instance took the id over; the older one is refused from now on", w.id))
	}
	what := "worker"
	if w.passive {
		what = "standby worker"
	}
	c.cfg.Log(fmt.Sprintf("%s %s joined with %d slots (data plane %s)%s", what, w.id, w.slots, w.dataAddr, describeOffers(hello.Running)))
	c.takeOffers(w, hello.Running) // and tells waiting jobs of the new worker
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	recvErr := make(chan error, 1)
	go func() { // ends when the handler returns and gRPC cancels the stream
		for {
			m, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			c.onWorkerMessage(w, m)
		}
	}()
	welcome := &pb.Welcome{HeartbeatIntervalNs: int64(c.cfg.HeartbeatInterval), HeartbeatTimeoutNs: int64(c.cfg.HeartbeatTimeout), Epoch: c.lead.Epoch()}
	if err := stream.Send(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Welcome{Welcome: welcome}}); err != nil {
		c.lose(w, err.Error())
		return err
	}
	check := time.NewTicker(c.cfg.HeartbeatInterval)
	defer check.Stop()
	// The silence of a worker counts only while the coordinator itself
	// ran: after it was frozen (SIGSTOP, a stalled VM, a starved machine)
	// the heartbeats of that time are still unread, and declaring their
	// senders lost would fail healthy workers. A check that comes much
	// later than its interval starts the count again.
	lastCheck, watchedFrom := time.Now(), time.Now()
	reason := ""
	for reason == "" {
		select {
		case m := <-w.out:
			if err := stream.Send(m); err != nil {
				reason = "sending to it failed: " + err.Error()
			}
		case err := <-recvErr:
			reason = "its session ended: " + err.Error()
		case <-w.lost:
			reason = "replaced"
		case <-check.C:
			w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Beat{Beat: &pb.Beat{}}})
			now := time.Now()
			if now.Sub(lastCheck) > c.cfg.HeartbeatInterval+c.cfg.HeartbeatTimeout/2 {
				watchedFrom = now
			}
			lastCheck = now
			last := time.Unix(0, w.lastBeat.Load())
			if last.Before(watchedFrom) {
				last = watchedFrom
			}
			if silent := now.Sub(last); silent > c.cfg.HeartbeatTimeout {
				reason = fmt.Sprintf("no heartbeat for %v (timeout %v)", silent.Round(time.Millisecond), c.cfg.HeartbeatTimeout)
			}
		case <-ctx.Done():
			reason = "its connection closed"
		case <-c.ctx.Done():
			reason = "the coordinator stopped"
		}
	}
	if c.Deposed() != nil {
		reason = "the coordinator was superseded"
	}
	c.lose(w, reason)
	if c.Deposed() != nil {
		return c.deposedStatus() // the worker learns why, and that nothing commits
	}
	if w.takenOver.Load() {
		return status.Errorf(codes.FailedPrecondition, "worker id %s %v", w.id, ErrTakenOver) // the worker exits
	}
	return nil
}

// lose removes a worker and fails the attempts it took part in.
func (c *Coordinator) lose(w *workerConn, reason string) {
	c.mu.Lock()
	select {
	case <-w.lost:
		c.mu.Unlock()
		return
	default:
	}
	close(w.lost)
	if c.workers[w.id] == w {
		delete(c.workers, w.id)
	}
	if c.ctx.Err() != nil {
		// The coordinator stops leading: the worker's attempts run on
		// for the successor, and nothing restarts here.
		c.mu.Unlock()
		return
	}
	// An executor is registered under each of its shares' keys: each
	// learns of the loss once, or the engine would take the worker's
	// subtasks as failed again after their first restart had moved them
	// (or promoted their standbys), and restart them a second time.
	var xs []*remoteExecutor
	for _, x := range c.executors {
		if !slices.Contains(xs, x) {
			xs = append(xs, x)
		}
	}
	c.notifyLocked()
	c.mu.Unlock()
	c.cfg.Log(fmt.Sprintf("worker %s lost: %s", w.id, reason))
	for _, x := range xs {
		x.workerLost(w, reason)
	}
}

func (c *Coordinator) onWorkerMessage(w *workerConn, m *pb.WorkerMessage) {
	w.lastBeat.Store(time.Now().UnixNano())
	var key string
	switch x := m.Msg.(type) {
	case *pb.WorkerMessage_Heartbeat:
		w.mu.Lock()
		for _, a := range x.Heartbeat.Attempts {
			w.metrics[a.Key] = a
			var n int64
			for _, c := range a.Subtasks {
				n += c.RecordsIn + c.RecordsOut
			}
			w.records[a.Key] = n
		}
		w.mu.Unlock()
		return
	case *pb.WorkerMessage_Snapshot:
		key = x.Snapshot.Key
	case *pb.WorkerMessage_Finished:
		key = x.Finished.Key
	case *pb.WorkerMessage_Ended:
		key = x.Ended.Key
	case *pb.WorkerMessage_Failed:
		key = x.Failed.Key
	case *pb.WorkerMessage_Restarted:
		key = x.Restarted.Key
	case *pb.WorkerMessage_Stopped:
		key = x.Stopped.Key
	case *pb.WorkerMessage_Committed:
		key = x.Committed.Key
	case *pb.WorkerMessage_Replay:
		key = x.Replay.Key
	case *pb.WorkerMessage_Moved:
		key = x.Moved.Key
	case *pb.WorkerMessage_Inject:
		key = x.Inject.Key
	case *pb.WorkerMessage_Waits:
		key = x.Waits.Key
	default:
		return
	}
	c.mu.Lock()
	ex := c.executors[key]
	c.mu.Unlock()
	if ex != nil {
		ex.onMessage(w, m)
	}
}

// workersLocked returns the live workers, in no order.
func (c *Coordinator) workersLocked() []*workerConn {
	ws := make([]*workerConn, 0, len(c.workers))
	for _, w := range c.workers {
		ws = append(ws, w)
	}
	return ws
}

// freeSlotsLocked returns the live workers whose slots an attempt may
// take, and their free slots: for a first attempt the workers that are not
// passive standbys, sorted by id; for a restart every worker, passive
// standbys first (they hold the state loaded).
func (c *Coordinator) freeSlotsLocked(restart bool) ([]*workerConn, int) {
	ws := make([]*workerConn, 0, len(c.workers))
	free := 0
	for _, w := range c.workers {
		if w.passive && !restart {
			continue
		}
		ws = append(ws, w)
		free += max(0, w.slots-w.used)
	}
	sort.Slice(ws, func(i, j int) bool {
		if ws[i].passive != ws[j].passive {
			return ws[i].passive
		}
		return ws[i].id < ws[j].id
	})
	return ws, free
}
