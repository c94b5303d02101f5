package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/state/lsm"
	"github.com/weir-stream/weir/internal/transport"
)

// WorkerConfig configures a worker process.
type WorkerConfig struct {
	// ID names the worker; default host-pid.
	ID string
	// Coordinator is the coordinator's address.
	Coordinator string
	// Listen is the data plane's address (default 127.0.0.1:0); Advertise,
	// if set, is the address other workers dial instead (behind NAT or
	// in Kubernetes, the pod's address).
	Listen, Advertise string
	// Slots is how many subtasks of each operator the worker runs at once
	// (one slot holds subtask i of every operator of a job). Default 1.
	Slots int
	// PassiveStandby makes the worker a passive standby: the coordinator
	// places only restarted attempts on it, and it keeps the state of each
	// job's latest completed checkpoint loaded, so that a restart placed
	// on it reads no state from the store.
	PassiveStandby bool
	Program        Program
	Security       Security
	// Log receives a line for each notable event.
	Log func(string)
}

// Worker runs its share of the attempts the coordinator deploys on it.
type Worker struct {
	cfg      WorkerConfig
	instance string // this process's, random (takeover.go)
	node     *transport.Node
	cache    passiveCache
	// epoch is the newest coordinator leadership epoch the worker served:
	// it refuses an older coordinator, and commit orders from one.
	epoch atomic.Uint64
}

// NewWorker starts the worker's data plane. Run connects it to the
// coordinator; Close stops the data plane.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	if cfg.Slots <= 0 {
		cfg.Slots = 1
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.ID == "" {
		host, _ := os.Hostname()
		cfg.ID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if cfg.Log == nil {
		cfg.Log = func(string) {}
	}
	server, client, err := cfg.Security.TLS()
	if err != nil {
		return nil, err
	}
	node, err := transport.Listen(cfg.Listen, transport.Config{ServerTLS: server, ClientTLS: client, Secret: []byte(cfg.Security.Token), Log: cfg.Log})
	if err != nil {
		return nil, err
	}
	if cfg.Advertise == "" {
		cfg.Advertise = node.Addr()
	}
	var nonce [8]byte
	rand.Read(nonce[:])
	return &Worker{cfg: cfg, node: node, instance: hex.EncodeToString(nonce[:]), cache: passiveCache{runs: map[string]*cachedCheckpoint{}}}, nil
}

// DataAddr returns the address other workers send records to.
func (w *Worker) DataAddr() string { return w.cfg.Advertise }

// Close stops the data plane.
func (w *Worker) Close() error { return w.node.Close() }

// ErrRejected is wrapped by the error of a worker whose coordinator refused
// its credentials: trying again cannot help.
var ErrRejected = errors.New("the coordinator rejected this worker")

// Run keeps a session with the coordinator until ctx ends, reconnecting
// after a lost session (a restarted coordinator, say). The attempts of a
// lost session are cancelled: the coordinator redeploys them. Run returns
// nil when ctx ends; an error wrapping ErrTakenOver when a newer process
// with the same worker id joined the coordinator (takeover.go): this one
// must exit; and an error wrapping ErrRejected, with the coordinator's
// reason, when the coordinator refuses the worker's credentials (gRPC
// Unauthenticated or PermissionDenied: a wrong --token, say), which is
// not tried again.
func (w *Worker) Run(ctx context.Context) error {
	// The worker's stores and the local copies of their files outlive its
	// attempts, for the restarts placed on it again.
	lsm.Enter()
	defer lsm.Leave()
	backoff := 100 * time.Millisecond
	for {
		start := time.Now()
		err := w.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if c := status.Code(err); c == codes.Unauthenticated || c == codes.PermissionDenied {
			return fmt.Errorf("%w: coordinator %s: %s", ErrRejected, w.cfg.Coordinator, status.Convert(err).Message())
		}
		if time.Since(start) > 10*time.Second {
			backoff = 100 * time.Millisecond
		}
		if status.Code(err) == codes.FailedPrecondition {
			err := fmt.Errorf("worker id %s %w; exiting", w.cfg.ID, ErrTakenOver)
			w.cfg.Log(err.Error())
			return err
		}
		if status.Code(err) == codes.Aborted {
			w.cfg.Log(fmt.Sprintf("coordinator %s was superseded by a newer one: its attempts here were cancelled and commit nothing (%s)", w.cfg.Coordinator, status.Convert(err).Message()))
		}
		w.cfg.Log(fmt.Sprintf("session with coordinator %s ended: %v; reconnecting in %v", w.cfg.Coordinator, err, backoff))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// session is one connection to the coordinator.
type session struct {
	w     *Worker
	ctx   context.Context
	out   chan *pb.WorkerMessage
	epoch uint64 // the coordinator's leadership epoch

	mu       sync.Mutex
	attempts map[string]*workerAttempt
	wg       sync.WaitGroup
	// Named-point failure injection (inject.go): the subtasks waiting for
	// the coordinator's answer, by token.
	nextInject int64
	injects    map[int64]chan bool
}

func (w *Worker) session(ctx context.Context) error {
	conn, err := w.cfg.Security.Dial(w.cfg.Coordinator)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := pb.NewCoordinatorClient(conn).Connect(ctx)
	if err != nil {
		return err
	}
	var jobs []string
	if w.cfg.Program != nil {
		jobs = w.cfg.Program.Jobs()
	}
	hello := &pb.Hello{WorkerId: w.cfg.ID, DataAddr: w.cfg.Advertise, Slots: int32(w.cfg.Slots), Jobs: jobs, PassiveStandby: w.cfg.PassiveStandby, Instance: w.instance}
	if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Hello{Hello: hello}}); err != nil {
		if errors.Is(err, io.EOF) { // the stream ended; Recv says why
			_, err = stream.Recv()
		}
		return err
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	welcome := first.GetWelcome()
	if welcome == nil {
		return errors.New("the coordinator did not welcome the worker")
	}
	if newest := w.serve(welcome.Epoch); welcome.Epoch < newest {
		return fmt.Errorf("the coordinator leads epoch %d, older than epoch %d that this worker served: it was superseded, so the worker does not join it", welcome.Epoch, newest)
	}
	w.cfg.Log(fmt.Sprintf("joined coordinator %s with %d slots, data plane on %s", w.cfg.Coordinator, w.cfg.Slots, w.cfg.Advertise))
	s := &session{w: w, ctx: ctx, out: make(chan *pb.WorkerMessage, 1024), attempts: map[string]*workerAttempt{}, epoch: welcome.Epoch}
	defer s.wg.Wait() // after cancel (deferred later, runs first)
	defer cancel()
	sendErr := make(chan error, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		sendErr <- s.send(stream, time.Duration(welcome.HeartbeatIntervalNs))
	}()
	recvErr := make(chan error, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			m, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			s.handle(m)
		}
	}()
	select {
	case err = <-sendErr:
		if errors.Is(err, io.EOF) {
			// The stream ended; its status (why the coordinator ended
			// the session: superseded, say) comes with Recv.
			select {
			case err = <-recvErr:
			case <-ctx.Done():
			}
		}
	case err = <-recvErr:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("the coordinator closed the session")
	}
	return err
}

// serve records that the worker serves a coordinator of epoch e, and
// returns the newest epoch it served, e included.
func (w *Worker) serve(e uint64) uint64 {
	for {
		old := w.epoch.Load()
		if e <= old || w.epoch.CompareAndSwap(old, e) {
			return max(old, e)
		}
	}
}

// send writes the session's outgoing messages and heartbeats; it is the
// only goroutine that sends on the stream.
func (s *session) send(stream pb.Coordinator_ConnectClient, interval time.Duration) error {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		var m *pb.WorkerMessage
		select {
		case <-s.ctx.Done():
			return s.ctx.Err()
		case m = <-s.out:
		case <-t.C:
			m = &pb.WorkerMessage{Msg: &pb.WorkerMessage_Heartbeat{Heartbeat: s.heartbeat()}}
		}
		if err := stream.Send(m); err != nil {
			return err
		}
	}
}

// post queues a message for the coordinator; it gives up when the
// session ends.
func (s *session) post(m *pb.WorkerMessage) {
	select {
	case s.out <- m:
	case <-s.ctx.Done():
	}
}

func (s *session) heartbeat() *pb.Heartbeat {
	s.mu.Lock()
	defer s.mu.Unlock()
	hb := &pb.Heartbeat{}
	for _, a := range s.attempts {
		hb.Attempts = append(hb.Attempts, a.metrics())
	}
	return hb
}

// handle acts on a message from the coordinator.
func (s *session) handle(m *pb.CoordinatorMessage) {
	switch x := m.Msg.(type) {
	case *pb.CoordinatorMessage_Deploy:
		s.deploy(x.Deploy)
	case *pb.CoordinatorMessage_Prefetch:
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.prefetch(x.Prefetch)
		}()
	case *pb.CoordinatorMessage_Command:
		if x.Command.Kind == pb.Command_INJECT {
			s.injectAnswer(x.Command) // the asking subtask waits: not queued behind other commands
			return
		}
		s.mu.Lock()
		a := s.attempts[x.Command.Key]
		s.mu.Unlock()
		switch {
		case a == nil:
		case x.Command.Kind == pb.Command_WAITS:
			// Not queued either: the attempt's commands may be what is stuck.
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				a.reportWaits(x.Command)
			}()
		default:
			a.command(x.Command)
		}
	}
}

func (s *session) deploy(d *pb.Deploy) {
	a := newWorkerAttempt(s, d)
	s.mu.Lock()
	if _, dup := s.attempts[d.Key]; dup {
		s.mu.Unlock()
		return
	}
	s.attempts[d.Key] = a
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		err := a.run()
		s.mu.Lock()
		delete(s.attempts, d.Key)
		s.mu.Unlock()
		if err != nil {
			s.w.cfg.Log(fmt.Sprintf("attempt %s failed: %v", d.Key, err))
		}
		s.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Ended{Ended: attemptEnded(d.Key, err)}})
	}()
}
