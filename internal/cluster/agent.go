package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/weir-stream/weir/internal/cluster/pb"
)

// agent is what a worker runs for its coordinators: the attempts
// deployed on it and the queue of its reports, which outlive each session
// with a coordinator (worker_session.go).
//
// An attempt is claimed by the coordinator that deployed it, or that
// adopted it (Command ADOPT) after a session was lost. While unclaimed,
// the attempt runs on, its reports (snapshots, finished subtasks, its
// end) wait in the attempt, and the next session's hello lists it
// (Hello.running); an ADOPT claims it and sends its reports on. Attempts
// no coordinator claimed within the grace period after the session's
// loss are cancelled.
type agent struct {
	w   *Worker
	ctx context.Context // the worker's run: attempts live at most as long
	out chan *pb.WorkerMessage

	mu       sync.Mutex
	attempts map[string]*workerAttempt
	// ended holds the attempts that ended unclaimed, until a coordinator
	// adopts them (and so learns of their end) or their grace ends.
	ended map[string]*workerAttempt
	epoch uint64 // the current session's coordinator epoch; 0 while none
	// attached is set while a session runs: the grace period counts from
	// its end, not from each failed attempt to reconnect.
	attached bool
	// lost is closed when the current session ends (nil: none yet).
	lost  chan struct{}
	grace *time.Timer
	// Named-point failure injection (inject.go): the subtasks waiting for
	// the coordinator's answer, by token.
	nextInject int64
	injects    map[int64]chan bool
	wg         sync.WaitGroup // attempts and background work
}

func newAgent(ctx context.Context, w *Worker) *agent {
	return &agent{w: w, ctx: ctx, out: make(chan *pb.WorkerMessage, 4096),
		attempts: map[string]*workerAttempt{}, ended: map[string]*workerAttempt{}}
}

// close waits for the attempts, which end with the worker's context.
func (g *agent) close() {
	g.mu.Lock()
	if g.grace != nil {
		g.grace.Stop()
	}
	g.mu.Unlock()
	g.wg.Wait()
}

// post queues a message for the coordinator; it gives up when the worker
// stops.
func (g *agent) post(m *pb.WorkerMessage) {
	select {
	case g.out <- m:
	case <-g.ctx.Done():
	}
}

// attach starts a session with a coordinator of epoch.
func (g *agent) attach(epoch uint64) {
	g.mu.Lock()
	g.epoch, g.attached = epoch, true
	g.lost = make(chan struct{})
	g.mu.Unlock()
}

// sessionLost returns a channel closed when the current session ends.
func (g *agent) sessionLost() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lost == nil {
		g.lost = make(chan struct{})
		close(g.lost)
	}
	return g.lost
}

// detach ends the session: every attempt is unclaimed until a
// coordinator adopts it, for the grace period, then cancelled. After a
// session that never started (the coordinator could not be reached) it
// does nothing: the grace period of the last loss runs on.
func (g *agent) detach() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.attached {
		return
	}
	g.attached, g.epoch = false, 0
	if g.lost != nil {
		close(g.lost)
		g.lost = nil
	}
	for _, a := range g.attempts {
		a.unclaim()
	}
	if len(g.attempts) == 0 {
		return
	}
	if g.w.cfg.Grace < 0 {
		g.expireLocked("the worker keeps no attempts without a coordinator")
		return
	}
	if g.grace != nil {
		g.grace.Stop()
	}
	g.grace = time.AfterFunc(g.w.cfg.Grace, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.expireLocked(fmt.Sprintf("no coordinator adopted it within %v", g.w.cfg.Grace))
	})
}

// expireLocked cancels the unclaimed attempts and forgets the ended ones.
func (g *agent) expireLocked(why string) {
	for key, a := range g.attempts {
		if !a.isClaimed() {
			g.w.cfg.Log(fmt.Sprintf("attempt %s cancelled: %s", key, why))
			a.expired = true
			a.cancel()
		}
	}
	clear(g.ended)
}

// running counts the attempts that run.
func (g *agent) running() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.attempts)
}

func (g *agent) describeRunning() string {
	if n := g.running(); n > 0 {
		return fmt.Sprintf("its %d attempts run on; looking for the leader", n)
	}
	return "reconnecting"
}

// report lists the running attempts for a hello, by key.
func (g *agent) report() []*pb.RunningShare {
	g.mu.Lock()
	as := make([]*workerAttempt, 0, len(g.attempts))
	for _, a := range g.attempts {
		as = append(as, a)
	}
	g.mu.Unlock()
	sort.Slice(as, func(i, j int) bool { return as[i].d.Key < as[j].d.Key })
	out := make([]*pb.RunningShare, 0, len(as))
	for _, a := range as {
		out = append(out, a.running())
	}
	return out
}

func (g *agent) heartbeat() *pb.Heartbeat {
	g.mu.Lock()
	defer g.mu.Unlock()
	hb := &pb.Heartbeat{}
	for _, a := range g.attempts {
		if a.isClaimed() {
			hb.Attempts = append(hb.Attempts, a.metrics())
		}
	}
	return hb
}

// handle acts on a message from the coordinator of epoch.
func (g *agent) handle(m *pb.CoordinatorMessage, epoch uint64) {
	switch x := m.Msg.(type) {
	case *pb.CoordinatorMessage_Deploy:
		g.deploy(x.Deploy, epoch)
	case *pb.CoordinatorMessage_Prefetch:
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.prefetch(x.Prefetch)
		}()
	case *pb.CoordinatorMessage_Command:
		c := x.Command
		switch c.Kind {
		case pb.Command_INJECT:
			g.injectAnswer(c) // the asking subtask waits: not queued behind other commands
			return
		case pb.Command_ADOPT:
			g.adopt(c.Key, epoch)
			return
		}
		g.mu.Lock()
		a := g.attempts[c.Key]
		if a == nil && c.Kind == pb.Command_CANCEL {
			delete(g.ended, c.Key) // its end no longer matters to anyone
		}
		g.mu.Unlock()
		switch {
		case a == nil:
		case c.Kind == pb.Command_WAITS:
			// Not queued either: the attempt's commands may be what is stuck.
			g.wg.Add(1)
			go func() {
				defer g.wg.Done()
				a.reportWaits(c)
			}()
		default:
			a.command(c)
		}
	}
}

// adopt claims the attempt key for the coordinator of epoch, which now
// drives it, and sends it the reports the attempt held meanwhile.
func (g *agent) adopt(key string, epoch uint64) {
	g.mu.Lock()
	a := g.attempts[key]
	if a == nil {
		a = g.ended[key]
		delete(g.ended, key)
	}
	g.mu.Unlock()
	if a == nil {
		return
	}
	a.claim(epoch)
	g.w.cfg.Log(fmt.Sprintf("attempt %s adopted by the coordinator of epoch %d", key, epoch))
}

func (g *agent) deploy(d *pb.Deploy, epoch uint64) {
	a := newWorkerAttempt(g, d, epoch)
	g.mu.Lock()
	if _, dup := g.attempts[d.Key]; dup {
		g.mu.Unlock()
		return
	}
	g.attempts[d.Key] = a
	g.wg.Add(1)
	g.mu.Unlock()
	go func() {
		defer g.wg.Done()
		err := a.run()
		switch {
		case err == nil:
		case d.StandbyShare && errors.Is(err, context.Canceled):
			// Cancelled with its attempt, or dismissed once every
			// subtask ended (remoteExecutor.dismissStandbysLocked).
			g.w.cfg.Log(fmt.Sprintf("attempt %s: its active standbys stopped: cancelled", d.Key))
		default:
			g.w.cfg.Log(fmt.Sprintf("attempt %s failed: %v", d.Key, err))
		}
		g.mu.Lock()
		delete(g.attempts, d.Key)
		if !a.isClaimed() && !a.expired {
			g.ended[d.Key] = a // its end waits for a coordinator to adopt it
		}
		g.mu.Unlock()
		a.post(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Ended{Ended: attemptEnded(d.Key, err)}})
	}()
}

// running describes the attempt for a hello (Hello.running).
func (a *workerAttempt) running() *pb.RunningShare {
	r := &pb.RunningShare{Key: a.d.Key, Name: a.d.Name, LastTrigger: a.lastTrigger.Load(),
		StandbyShare: a.d.StandbyShare, Attempt: a.d.Attempt, Epoch: a.epoch.Load()}
	a.mu.Lock()
	rt := a.rt
	a.mu.Unlock()
	for _, s := range a.d.Subtasks {
		switch {
		case rt == nil:
		case rt.Retired(sid(s)):
			continue // a successor share runs it now (live rescale)
		case rt.Finished(sid(s)):
			r.Finished = append(r.Finished, s)
		}
		r.Subtasks = append(r.Subtasks, s)
	}
	return r
}

// isClaimed reports whether a coordinator drives the attempt.
func (a *workerAttempt) isClaimed() bool {
	a.postMu.Lock()
	defer a.postMu.Unlock()
	return a.claimed
}

// unclaim holds the attempt's reports until a coordinator adopts it.
func (a *workerAttempt) unclaim() {
	a.postMu.Lock()
	a.claimed = false
	a.postMu.Unlock()
}

// claim makes the coordinator of epoch the attempt's, and sends it the
// reports held meanwhile, in order.
func (a *workerAttempt) claim(epoch uint64) {
	a.postMu.Lock()
	defer a.postMu.Unlock()
	a.epoch.Store(epoch)
	a.claimed = true
	for _, m := range a.pending {
		a.g.post(m)
	}
	a.pending = nil
}

// post sends a report of the attempt to its coordinator, or holds it
// while no coordinator claims the attempt.
func (a *workerAttempt) post(m *pb.WorkerMessage) {
	a.postMu.Lock()
	defer a.postMu.Unlock()
	if !a.claimed {
		a.pending = append(a.pending, m)
		return
	}
	a.g.post(m)
}

// cancel stops the attempt: its run returns.
func (a *workerAttempt) cancel() {
	a.mu.Lock()
	halt := a.halt
	a.mu.Unlock()
	if halt != nil {
		halt()
	}
}
