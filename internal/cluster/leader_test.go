package cluster_test

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
)

func newCoordinator(t *testing.T, store string, logs *logLines) *cluster.Coordinator {
	t.Helper()
	c, err := cluster.NewCoordinator(t.Context(), cluster.CoordinatorConfig{Listen: "127.0.0.1:0", Store: store,
		Program: keycountProgram{store: store, logs: logs}, HeartbeatInterval: 20 * time.Millisecond, Log: logs.add})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A coordinator started on the store of a running one supersedes it: the
// older one logs that it commits nothing, ends its workers' sessions with
// the reason, and refuses new jobs and sessions.
func TestACoordinatorStartedOnTheSameStoreDeposesTheOlder(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	logsA, logsB, logsW := newLogLines(), newLogLines(), newLogLines()
	a := newCoordinator(t, store, logsA)
	defer a.Close()
	w := startWorker(t, t.Context(), cluster.WorkerConfig{ID: "w1", Coordinators: []string{a.Addr()}, Log: logsW.add})
	defer w.stop()
	logsA.wait(t, "^worker w1 joined")

	b := newCoordinator(t, store, logsB)
	defer b.Close()
	if a.Epoch() != 1 || b.Epoch() != 2 {
		t.Fatalf("epochs %d and %d, want 1 and 2", a.Epoch(), b.Epoch())
	}
	logsA.wait(t, "^coordinator epoch 1 superseded by epoch 2: committing nothing; the newer one is coordinator "+b.Addr())
	<-a.Done()
	if err := a.Deposed(); !errors.Is(err, cluster.ErrDeposed) {
		t.Fatalf("Deposed() = %v, want ErrDeposed", err)
	}
	if b.Deposed() != nil {
		t.Fatalf("the newer coordinator is deposed: %v", b.Deposed())
	}
	logsW.wait(t, "^coordinator .* was superseded by a newer one: it commits nothing from now on")

	conn, err := cluster.Security{}.Dial(a.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = pb.NewCoordinatorClient(conn).Submit(t.Context(), &pb.SubmitRequest{Job: "keycount", Args: []string{"out"}})
	if status.Code(err) != codes.Aborted {
		t.Fatalf("submitting to the deposed coordinator: %v, want Aborted", err)
	}
}

// A worker that served a coordinator of some epoch does not join one of
// an older epoch (a coordinator of another store, here, reached at the
// same address through a proxy).
func TestAWorkerRefusesACoordinatorOfAnOlderEpoch(t *testing.T) {
	dir := t.TempDir()
	older, newer := filepath.Join(dir, "older"), filepath.Join(dir, "newer")
	logsO, logsN, logsW := newLogLines(), newLogLines(), newLogLines()
	first := newCoordinator(t, newer, newLogLines())
	first.Close() // epoch 1 of the newer store
	n := newCoordinator(t, newer, logsN)
	defer n.Close()
	o := newCoordinator(t, older, logsO)
	defer o.Close()
	if n.Epoch() != 2 || o.Epoch() != 1 {
		t.Fatalf("epochs %d and %d, want 2 and 1", n.Epoch(), o.Epoch())
	}
	p := newProxy(t, n.Addr())
	defer p.close()
	w := startWorker(t, t.Context(), cluster.WorkerConfig{ID: "w1", Coordinators: []string{p.addr()}, Log: logsW.add})
	defer w.stop()
	logsW.wait(t, "^joined coordinator") // it served epoch 2
	p.switchTo(o.Addr())
	logsW.wait(t, "the coordinator leads epoch 1, older than epoch 2 that this worker served: it was superseded, so the worker does not join it")
}

// proxy forwards TCP connections to a target that the test can switch;
// switching closes the connections to the old target.
type proxy struct {
	ln     net.Listener
	mu     sync.Mutex
	target string
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.serve()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		d, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, d)
		p.wg.Add(2)
		p.mu.Unlock()
		pipe := func(to, from net.Conn) {
			defer p.wg.Done()
			io.Copy(to, from)
			to.Close()
			from.Close()
		}
		go pipe(c, d)
		go pipe(d, c)
	}
}

func (p *proxy) switchTo(target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = target
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) close() {
	p.ln.Close()
	p.switchTo("")
	p.wg.Wait()
}

// Two live processes with one worker id (a frozen pod and its
// replacement): the later registration takes the id over once. The older
// one's session ends, and it is refused from then on: its Run returns
// ErrTakenOver instead of evicting the newer one in turn.
func TestANewerWorkerInstanceTakesTheIdOverOnce(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	logs, logsOld := newLogLines(), newLogLines()
	c := newCoordinator(t, store, logs)
	defer c.Close()
	old := startWorker(t, t.Context(), cluster.WorkerConfig{ID: "w1", Coordinators: []string{c.Addr()}, Log: logsOld.add})
	defer old.w.Close()
	logs.wait(t, "^worker w1 joined")
	newer := startWorker(t, t.Context(), cluster.WorkerConfig{ID: "w1", Coordinators: []string{c.Addr()}, Log: logs.add})
	defer newer.stop()
	logs.wait(t, "^worker w1 lost: a newer instance of the worker took its id over")
	if err := <-old.done; !errors.Is(err, cluster.ErrTakenOver) {
		t.Fatalf("the older worker's Run returned %v, want ErrTakenOver", err)
	}
	logsOld.wait(t, "^worker id w1 taken over by a newer session; exiting$")
	logs.waitCount(t, "^worker w1 joined", 2)
	if n := logs.count("^worker w1 lost"); n != 1 {
		t.Fatalf("worker w1 was lost %d times, want once", n)
	}
}

// The older instance may have been lost already (a frozen pod, past the
// heartbeat timeout) when the newer one registers: the newer one still
// takes the id over, and the older one is refused when it comes back,
// also by a coordinator restarted on the same store.
func TestALostWorkerInstanceIsRefusedOnceANewerTookItsId(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	logs := newLogLines()
	c := newCoordinator(t, store, logs)
	addr := c.Addr()
	old, err := cluster.NewWorker(cluster.WorkerConfig{ID: "w1", Coordinators: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- old.Run(ctx) }()
	logs.wait(t, "^worker w1 joined")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	logs.wait(t, "^worker w1 lost")
	newer := startWorker(t, t.Context(), cluster.WorkerConfig{ID: "w1", Coordinators: []string{addr}})
	logs.wait(t, "^worker w1: a newer instance took the id over; the older one is refused from now on")
	if err := old.Run(t.Context()); !errors.Is(err, cluster.ErrTakenOver) {
		t.Fatalf("the older instance's Run returned %v, want ErrTakenOver", err)
	}
	newer.stop()
	c.Close()

	logs2 := newLogLines()
	c2, err := cluster.NewCoordinator(t.Context(), cluster.CoordinatorConfig{Listen: addr, Store: store, Log: logs2.add})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := old.Run(t.Context()); !errors.Is(err, cluster.ErrTakenOver) {
		t.Fatalf("after a coordinator restart the older instance's Run returned %v, want ErrTakenOver", err)
	}
	logs2.wait(t, "^worker w1 refused: a newer instance took its id over")
}
