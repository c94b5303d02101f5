package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/internal/store"
)

// Leadership. A coordinator claims a leadership epoch in the store when it
// starts (store.Lead), before it resumes any job, so a coordinator started
// on the store of a running one (a replacement for one that seemed lost,
// or a mistake) supersedes it. Every write that decides output is fenced
// by the epoch: the jobs' checkpoint commits and deletions (through the
// fenced checkpoint store handed to each run), the orders to commit
// (COMPLETE, sent only after a commit that passed its check), and the job
// records. A coordinator that finds itself superseded, at such a write or
// by watching the store, is deposed: it says so, stops its jobs'
// goroutines without recording their end and without cancelling their
// attempts (the newer coordinator adopts them), ends its workers'
// sessions with codes.Aborted and serves no more.

// ErrDeposed means the coordinator was superseded by a newer one on the
// same store; it wraps the store's *store.SupersededError.
var ErrDeposed = errors.New("deposed")

// leaderFence is the coordinator's store.Fence: its leadership's check,
// which deposes the coordinator when it fails with store.ErrFenced.
type leaderFence struct{ c *Coordinator }

func (f leaderFence) Check(ctx context.Context) error {
	if err := f.c.Deposed(); err != nil {
		return err
	}
	err := f.c.lead.Check(ctx)
	if errors.Is(err, store.ErrFenced) {
		f.c.depose(err)
		return f.c.Deposed()
	}
	return err
}

// holder describes this coordinator in its claim of an epoch.
func holder(addr string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("coordinator %s on %s, pid %d", addr, host, os.Getpid())
}

// depose stops the coordinator for good after its epoch was superseded
// (err). It logs once, and returns at once: the jobs' goroutines end on
// their own, and Close waits for them.
func (c *Coordinator) depose(err error) {
	c.deposeOnce.Do(func() {
		var s *store.SupersededError
		msg := fmt.Sprintf("coordinator epoch %d superseded: %v; committing nothing", c.lead.Epoch(), err)
		if errors.As(err, &s) && s.By > 0 {
			msg = fmt.Sprintf("coordinator epoch %d superseded by epoch %d: committing nothing", s.Epoch, s.By)
			if s.Holder != "" {
				msg += "; the newer one is " + s.Holder
			}
		}
		c.end(fmt.Errorf("%w: %s", ErrDeposed, msg), msg+"; leaving its jobs' attempts to the newer coordinator")
	})
}

// end stops the coordinator for good with err (which Deposed returns
// from then on), after logging msg. Its jobs' goroutines end on their
// own, and Close waits for them. Only the first call counts.
func (c *Coordinator) end(err error, msg string) {
	c.endOnce.Do(func() {
		c.deposedErr = err
		c.cfg.Log(msg)
		close(c.deposed)
		c.cancel()
	})
}

// Deposed returns nil until the coordinator stopped: then an error
// wrapping ErrDeposed, which says by which epoch, once it was
// superseded; ErrHandedOver after a handover; or why it could not take
// over as a standby.
func (c *Coordinator) Deposed() error {
	select {
	case <-c.deposed:
		return c.deposedErr
	default:
		return nil
	}
}

// Done is closed when the coordinator stopped (see Deposed).
func (c *Coordinator) Done() <-chan struct{} { return c.deposed }

// Epoch returns the coordinator's leadership epoch (0 before it leads).
func (c *Coordinator) Epoch() uint64 {
	if !c.leading.Load() {
		return 0
	}
	return c.lead.Epoch()
}

// watchLeadership checks the leadership every interval, so that a
// superseded coordinator stops even while none of its writes would find
// out (a job waiting for slots, an idle coordinator), and renews the
// lease every third of its period (ha.go). It returns when the
// coordinator stops.
func (c *Coordinator) watchLeadership(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		var err error
		if now := time.Now(); c.renewDue(now) {
			err = c.lead.Renew(c.ctx, c.leaseRecord(false))
			if errors.Is(err, store.ErrFenced) {
				c.depose(err)
			}
			if err == nil {
				err = c.Deposed()
			}
		} else {
			err = leaderFence{c}.Check(c.ctx)
		}
		switch {
		case err == nil:
			if failing {
				c.cfg.Log(fmt.Sprintf("the store answers again: epoch %d still leads", c.lead.Epoch()))
			}
			failing = false
		case errors.Is(err, ErrDeposed) || c.ctx.Err() != nil:
			return
		case !failing:
			failing = true // logged once per outage: commits fail meanwhile
			c.cfg.Log(fmt.Sprintf("cannot check the leadership, so nothing commits until the store answers: %v", err))
		}
	}
}

// deposedStatus is the gRPC error of calls to a deposed coordinator. It
// names the newer leader's address when the lease says it, so that
// workers follow it.
func (c *Coordinator) deposedStatus() error {
	msg := c.Deposed().Error()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if addr, _ := c.newerLeader(ctx); addr != "" {
		msg += "; " + leaderAt + addr
	}
	return status.Error(codes.Aborted, msg)
}

// newerLeader returns the address and epoch of the leader that
// superseded this coordinator, as the lease says; "" and 0 if the lease
// names no newer one (its successor did not write it yet).
func (c *Coordinator) newerLeader(ctx context.Context) (string, uint64) {
	rec, ok, err := store.ReadLease(ctx, c.blobs)
	if err != nil || !ok || rec.Epoch <= c.lead.Epoch() || rec.Addr == "" {
		return "", 0
	}
	return rec.Addr, rec.Epoch
}
