package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/store"
)

// High availability. Several coordinators may run on one store (weir
// coordinator --ha): one leads, the others wait as standbys until its
// lease expires or it hands over (store.AwaitLease), then claim the next
// epoch and take over: they read the job records, adopt the attempts the
// workers still run (adopt.go) and drive their checkpoints on. A standby
// serves only Leader; every other call, and a worker's session, is
// refused with codes.Unavailable and the leader's address, which clients
// and workers follow.
//
// A coordinator that stops leading (superseded, handed over, closed)
// leaves the workers' attempts running for its successor: it cancels
// none and orders nothing more.

// ErrHandedOver is why a coordinator stopped leading after a handover.
var ErrHandedOver = errors.New("handed over the leadership")

// leads reports whether the coordinator leads.
func (c *Coordinator) leads() bool { return c.leading.Load() && c.Deposed() == nil }

// Leading is closed once the coordinator leads.
func (c *Coordinator) Leading() <-chan struct{} { return c.leadingCh }

// standbyStatus is the error of a call to a coordinator that does not lead.
func (c *Coordinator) standbyStatus() error {
	addr, _ := c.leaderAddr.Load().(string)
	if addr == "" || addr == c.cfg.Advertise {
		addr = "(unknown yet)"
	}
	return status.Error(codes.Unavailable, standbyMessage+addr)
}

// gate refuses the calls of clients and workers while the coordinator
// does not lead: all but Leader.
func (c *Coordinator) gate(method string) error {
	if strings.HasSuffix(method, "/Leader") || c.leads() {
		return nil
	}
	if c.Deposed() != nil && !errors.Is(c.Deposed(), ErrHandedOver) {
		return c.deposedStatus()
	}
	return c.standbyStatus()
}

func (c *Coordinator) interceptors() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := c.gate(info.FullMethod); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := c.gate(info.FullMethod); err != nil {
				return err
			}
			return h(srv, ss)
		}),
	}
}

// Leader says whether this coordinator leads, and where the leader is.
func (c *Coordinator) Leader(ctx context.Context, _ *pb.LeaderRequest) (*pb.LeaderInfo, error) {
	info := &pb.LeaderInfo{Leading: c.leads(), Addr: c.cfg.Advertise}
	if info.Leading {
		info.Epoch, info.LeaderAddr = c.lead.Epoch(), c.cfg.Advertise
		return info, nil
	}
	info.LeaderAddr, _ = c.leaderAddr.Load().(string)
	info.Epoch = c.leaderEpoch.Load()
	if c.Deposed() != nil {
		// It led itself: the lease says who leads now, if anyone wrote it.
		info.LeaderAddr, info.Epoch = c.newerLeader(ctx)
	}
	return info, nil
}

// Handover stops leading and releases the lease: a standby takes over
// at once and adopts the running attempts.
func (c *Coordinator) Handover(ctx context.Context, _ *pb.HandoverRequest) (*pb.LeaderInfo, error) {
	c.stepDown(ErrHandedOver, "handing over: the attempts run on for the successor to adopt")
	if err := c.lead.Renew(ctx, c.leaseRecord(true)); err != nil {
		c.cfg.Log(fmt.Sprintf("releasing the lease: %v; a standby takes over when it expires", err))
	}
	return &pb.LeaderInfo{Addr: c.cfg.Advertise, Epoch: c.lead.Epoch()}, nil
}

// stepDown stops leading for reason (wrapped by Deposed): the jobs'
// goroutines stop without cancelling the workers' attempts, which run on
// for the successor. It returns once the jobs' goroutines ended, so
// nothing this coordinator decides follows.
func (c *Coordinator) stepDown(reason error, msg string) {
	c.end(reason, msg)
	c.jobsWG.Wait()
}

// leaseRecord is this coordinator's lease, released or not.
func (c *Coordinator) leaseRecord(released bool) store.LeaseRecord {
	return store.LeaseRecord{Holder: holder(c.cfg.Advertise), Addr: c.cfg.Advertise, Renewals: c.renewals.Add(1),
		PeriodMillis: c.cfg.LeasePeriod.Milliseconds(), Released: released}
}

// awaitLeadership waits as a standby until the lease expires, then takes
// over. It returns when the coordinator leads or stops.
func (c *Coordinator) awaitLeadership() {
	c.cfg.Log(fmt.Sprintf("standby on the store %s: waiting for the leader's lease (period %v) to expire", c.cfg.Store, c.cfg.LeasePeriod))
	lead, err := store.AwaitLease(c.ctx, c.blobs, holder(c.cfg.Advertise), c.cfg.Advertise, c.cfg.LeasePeriod, c.cfg.LeasePeriod/10, func(r store.LeaseRecord) {
		if old, _ := c.leaderAddr.Load().(string); old != r.Addr {
			c.cfg.Log(fmt.Sprintf("the leader (epoch %d) serves at %s", r.Epoch, r.Addr))
		}
		c.leaderAddr.Store(r.Addr)
		c.leaderEpoch.Store(r.Epoch)
	})
	if err != nil {
		if c.ctx.Err() == nil {
			c.end(err, fmt.Sprintf("waiting for the lease: %v", err))
		}
		return
	}
	if err := c.takeOver(c.ctx, lead); err != nil {
		c.end(err, fmt.Sprintf("taking over: %v", err))
	}
}

// takeOver makes the coordinator the leader of epoch lead: it announces
// itself in the lease, resumes the jobs (adopting the attempts the
// workers still run) and starts serving them.
func (c *Coordinator) takeOver(ctx context.Context, lead *store.Leadership) error {
	c.lead = lead
	c.leaderEpoch.Store(lead.Epoch())
	c.cfg.Log(fmt.Sprintf("leading the store %s with epoch %d", c.cfg.Store, lead.Epoch()))
	if err := lead.Renew(ctx, c.leaseRecord(false)); err != nil {
		return fmt.Errorf("writing the lease: %w", err)
	}
	c.leaderAddr.Store(c.cfg.Advertise)
	if err := c.resume(ctx); err != nil {
		return err
	}
	c.leading.Store(true)
	close(c.leadingCh)
	c.srvWG.Add(1)
	go func() {
		defer c.srvWG.Done()
		c.watchLeadership(c.cfg.HeartbeatInterval)
	}()
	return nil
}

// renewDue reports whether the lease is due for renewal at now, and
// notes the renewal.
func (c *Coordinator) renewDue(now time.Time) bool {
	if now.Sub(c.renewed) < c.cfg.LeasePeriod/3 {
		return false
	}
	c.renewed = now
	return true
}
