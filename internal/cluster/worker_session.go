package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/state/lsm"
)

// A worker's sessions. The worker holds one session at a time with the
// leading coordinator; its attempts (agent.go) outlive each session. When
// a session ends (the coordinator died, froze, was superseded or handed
// over) the worker looks for the leader among the coordinators it knows,
// trying the address a standby names first, and reports the attempts it
// still runs in its hello: the new leader adopts them, and they never
// stop.

// ErrRejected is wrapped by the error of a worker whose coordinator refused
// its credentials: trying again cannot help.
var ErrRejected = errors.New("the coordinator rejected this worker")

// Run keeps a session with the leading coordinator until ctx ends,
// reconnecting after a lost session. The attempts of a lost session run
// on for the grace period (WorkerConfig.Grace) and are cancelled if no
// coordinator adopted them by then. Run returns nil when ctx ends; an
// error wrapping ErrTakenOver when a newer process with the same worker
// id joined the coordinator (takeover.go): this one must exit; and an
// error wrapping ErrRejected, with the coordinator's reason, when the
// coordinator refuses the worker's credentials (gRPC Unauthenticated or
// PermissionDenied: a wrong --token, say), which is not tried again.
func (w *Worker) Run(ctx context.Context) error {
	// The worker's stores and the local copies of their files outlive its
	// attempts, for the restarts placed on it again.
	lsm.Enter()
	defer lsm.Leave()
	g := newAgent(ctx, w)
	defer g.close()
	backoff := 100 * time.Millisecond
	addrs := w.cfg.Coordinators
	next, addr := 0, addrs[0]
	for {
		start := time.Now()
		err := w.session(ctx, g, addr)
		g.detach()
		if ctx.Err() != nil {
			return nil
		}
		if c := status.Code(err); c == codes.Unauthenticated || c == codes.PermissionDenied {
			return fmt.Errorf("%w: coordinator %s: %s", ErrRejected, addr, status.Convert(err).Message())
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
			w.cfg.Log(fmt.Sprintf("coordinator %s was superseded by a newer one: it commits nothing from now on (%s)", addr, status.Convert(err).Message()))
		}
		hint := LeaderHint(err)
		if hint != "" && hint != addr {
			// A standby or a superseded coordinator named the leader: try
			// it at once.
			w.cfg.Log(fmt.Sprintf("following the leader to %s", hint))
			addr = hint
			continue
		}
		wait := backoff
		if g.running() > 0 {
			// Attempts wait for a coordinator to adopt them.
			wait = min(backoff, 500*time.Millisecond)
		}
		w.cfg.Log(fmt.Sprintf("session with coordinator %s ended: %v; %s in %v", addr, err, g.describeRunning(), wait))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		backoff = min(2*backoff, 5*time.Second)
		if i := slices.Index(addrs, addr); i >= 0 {
			next = i
		}
		next = (next + 1) % len(addrs)
		if len(addrs) > 1 || hint == "" {
			addr = addrs[next]
		}
	}
}

// leaderAt precedes the leader's address in the refusals of a standby and
// of a superseded coordinator; standbyMessage is how a standby refuses a
// call.
const (
	leaderAt       = "the leader serves at "
	standbyMessage = "this coordinator is a standby; " + leaderAt
)

// LeaderHint returns the leader's address a standby (codes.Unavailable)
// or superseded (codes.Aborted) coordinator named in err, or "".
func LeaderHint(err error) string {
	if c := status.Code(err); c != codes.Unavailable && c != codes.Aborted {
		return ""
	}
	_, hint, ok := strings.Cut(status.Convert(err).Message(), leaderAt)
	if !ok {
		return ""
	}
	hint, _, _ = strings.Cut(hint, " ")
	return hint
}

// welcomeTimeout bounds the wait for a coordinator's welcome after the
// hello; the worker then tries the next address.
const welcomeTimeout = 5 * time.Second

// session is one connection to the coordinator at addr.
func (w *Worker) session(ctx context.Context, g *agent, addr string) error {
	conn, err := w.cfg.Security.Dial(addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A coordinator that takes the connection but never answers (frozen
	// by SIGSTOP, say: the kernel accepts for it) would hold the worker
	// in the handshake while a standby takes over, and the new leader
	// would give up adopting the worker's attempts.
	timer := time.AfterFunc(welcomeTimeout, cancel)
	defer timer.Stop()
	stream, err := pb.NewCoordinatorClient(conn).Connect(ctx)
	if err != nil {
		if !timer.Stop() {
			return fmt.Errorf("coordinator %s did not welcome the worker within %v", addr, welcomeTimeout)
		}
		return err
	}
	var jobs []string
	if w.cfg.Program != nil {
		jobs = w.cfg.Program.Jobs()
	}
	running := g.report()
	hello := &pb.Hello{WorkerId: w.cfg.ID, DataAddr: w.cfg.Advertise, Slots: int32(w.cfg.Slots), Jobs: jobs,
		PassiveStandby: w.cfg.PassiveStandby, Instance: w.instance, Running: running}
	if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Hello{Hello: hello}}); err != nil {
		if errors.Is(err, io.EOF) { // the stream ended; Recv says why
			_, err = stream.Recv()
		}
		return err
	}
	first, err := stream.Recv()
	if !timer.Stop() {
		return fmt.Errorf("coordinator %s did not welcome the worker within %v", addr, welcomeTimeout)
	}
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
	what := ""
	if len(running) > 0 {
		what = fmt.Sprintf("; it runs %d attempts from before, for the coordinator to adopt", len(running))
	}
	w.cfg.Log(fmt.Sprintf("joined coordinator %s (epoch %d) with %d slots, data plane on %s%s", addr, welcome.Epoch, w.cfg.Slots, w.cfg.Advertise, what))
	g.attach(welcome.Epoch)
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel (deferred later, runs first)
	defer cancel()
	var heard atomic.Int64 // unix nanos of the coordinator's latest message
	heard.Store(time.Now().UnixNano())
	sendErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		sendErr <- g.send(ctx, stream, time.Duration(welcome.HeartbeatIntervalNs))
	}()
	recvErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			m, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			heard.Store(time.Now().UnixNano())
			g.handle(m, welcome.Epoch)
		}
	}()
	// A coordinator that beats (Welcome.heartbeat_timeout_ns) and falls
	// silent is frozen or cut off, though its connection stands: the
	// session ends, and the worker looks for the leader.
	var silence <-chan time.Time
	timeout := time.Duration(welcome.HeartbeatTimeoutNs)
	if timeout > 0 {
		t := time.NewTicker(time.Duration(welcome.HeartbeatIntervalNs))
		defer t.Stop()
		silence = t.C
	}
	for err == nil {
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
		case now := <-silence:
			if quiet := now.Sub(time.Unix(0, heard.Load())); quiet > timeout {
				err = fmt.Errorf("no word from the coordinator for %v (timeout %v)", quiet.Round(time.Millisecond), timeout)
			}
		}
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

// send writes the agent's outgoing messages and heartbeats on stream; it
// is the only goroutine that sends on it. It returns when ctx ends or a
// send fails.
func (g *agent) send(ctx context.Context, stream pb.Coordinator_ConnectClient, interval time.Duration) error {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		var m *pb.WorkerMessage
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m = <-g.out:
		case <-t.C:
			m = &pb.WorkerMessage{Msg: &pb.WorkerMessage_Heartbeat{Heartbeat: g.heartbeat()}}
		}
		if err := stream.Send(m); err != nil {
			return err
		}
	}
}
