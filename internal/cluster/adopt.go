package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/plan"
)

// Adoption. A coordinator that takes over a store (a standby after the
// leader's lease expired, or a coordinator restarted on the store) finds
// the jobs recorded as running. Their attempts may still run: workers keep
// them running without a coordinator for a grace period and list them in
// the hello of their next session (Hello.running). Before it runs such a
// job, the coordinator waits for those reports until they cover every
// subtask of the job's plan exactly once, then adopts them: the job's
// run starts with the attempt already running (engine.Config.Adopt), the
// coordinator sends each share ADOPT, commits the latest completed
// checkpoint (its predecessor may have died before it ordered the commit)
// and aborts the checkpoints triggered after it. Nothing restarts. If the
// reports do not cover the job within AdoptTimeout (a worker died too,
// or runs active standbys, which are not adopted), the coordinator
// cancels the reported shares and restarts the job from its latest
// checkpoint, as a coordinator without adoption would.

// offer is a share a worker still runs from before this coordinator led.
type offer struct {
	w *workerConn
	s *pb.RunningShare
}

// adoption is what a job adopts: the running shares that cover its plan.
type adoption struct {
	shares      []offer
	lastTrigger int64
}

func describeOffers(rs []*pb.RunningShare) string {
	if len(rs) == 0 {
		return ""
	}
	keys := make([]string, 0, len(rs))
	for _, r := range rs {
		keys = append(keys, r.Key)
	}
	return fmt.Sprintf(", running %s from before", strings.Join(keys, ", "))
}

// takeOffers files the shares worker w still runs for the jobs that wait
// to adopt theirs, and cancels the others: no job of this coordinator
// will drive them.
func (c *Coordinator) takeOffers(w *workerConn, running []*pb.RunningShare) {
	var orphans []string
	c.mu.Lock()
	for _, r := range running {
		if c.adopting[r.Name] {
			c.offers[r.Name] = append(c.offers[r.Name], offer{w, r})
		} else {
			orphans = append(orphans, r.Key)
		}
	}
	c.notifyLocked()
	c.mu.Unlock()
	for _, k := range orphans {
		c.cfg.Log(fmt.Sprintf("worker %s: cancelling attempt %s, which no job of this coordinator runs", w.id, k))
		w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{Key: k, Kind: pb.Command_CANCEL}}})
	}
}

// awaitAdoption waits until the workers' reports of job j's running
// shares cover every subtask of p, and returns them; or, after
// AdoptTimeout, cancels the reported shares and returns nil (the job
// restarts from its checkpoint).
func (c *Coordinator) awaitAdoption(ctx context.Context, j *job, p *plan.Plan) (*adoption, error) {
	timeout := time.NewTimer(c.cfg.AdoptTimeout)
	defer timeout.Stop()
	start := time.Now()
	for {
		c.mu.Lock()
		offers := slices.DeleteFunc(c.offers[j.id], func(o offer) bool { return isLost(o.w) })
		c.offers[j.id] = offers
		a, why := cover(p, offers)
		if a != nil {
			delete(c.adopting, j.id)
			delete(c.offers, j.id)
		}
		changed := c.changed
		c.mu.Unlock()
		if a != nil {
			c.cfg.Log(fmt.Sprintf("job %s: adopting its running attempt (%d shares) after %v; checkpoints continue after %d",
				j.id, len(a.shares), time.Since(start).Round(time.Millisecond), a.lastTrigger))
			return a, nil
		}
		j.setDetail("waiting for the workers to report its running attempt: " + why)
		select {
		case <-changed:
		case <-ctx.Done():
			c.dropAdoption(j, "")
			return nil, ctx.Err()
		case <-timeout.C:
			c.dropAdoption(j, fmt.Sprintf("job %s: no running attempt to adopt within %v (%s): restarting it from its latest checkpoint", j.id, c.cfg.AdoptTimeout, why))
			j.setDetail("")
			return nil, nil
		}
	}
}

// dropAdoption stops waiting for job j's running shares and cancels
// those reported, after logging msg (if any).
func (c *Coordinator) dropAdoption(j *job, msg string) {
	c.mu.Lock()
	offers := c.offers[j.id]
	delete(c.adopting, j.id)
	delete(c.offers, j.id)
	c.mu.Unlock()
	if msg != "" {
		c.cfg.Log(msg)
	}
	for _, o := range offers {
		o.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{Key: o.s.Key, Kind: pb.Command_CANCEL}}})
	}
}

func isLost(w *workerConn) bool {
	select {
	case <-w.lost:
		return true
	default:
		return false
	}
}

// cover returns the adoption of offers if they run every subtask of p
// exactly once and no active standbys; otherwise nil and what is
// missing.
func cover(p *plan.Plan, offers []offer) (*adoption, string) {
	runs := map[dataflow.SubtaskID]int{}
	a := &adoption{}
	for _, o := range offers {
		if o.s.StandbyShare {
			return nil, "it runs active standbys, which are not adopted"
		}
		for _, r := range o.s.Subtasks {
			runs[sid(r)]++
		}
		a.lastTrigger = max(a.lastTrigger, o.s.LastTrigger)
		a.shares = append(a.shares, o)
	}
	missing := 0
	for _, v := range p.Vertices {
		for i := range v.Parallelism {
			switch runs[dataflow.SubtaskID{Vertex: v.ID, Subtask: i}] {
			case 0:
				missing++
			case 1:
			default:
				return nil, fmt.Sprintf("subtask %d.%d runs twice", v.ID, i)
			}
		}
	}
	if missing > 0 {
		return nil, fmt.Sprintf("%d of %d subtasks reported", p.Subtasks()-missing, p.Subtasks())
	}
	return a, ""
}

// adoptAttempt returns the executor of the adopted shares of job j that
// run the subtasks spec's Local accepts, or nil if the job holds none.
func (c *Coordinator) adoptAttempt(j *job, cfg engine.Config, spec engine.AttemptSpec) *remoteExecutor {
	want := func(id dataflow.SubtaskID) bool { return spec.Options.Local == nil || spec.Options.Local(id) }
	j.mu.Lock()
	var mine []offer
	var lastTrigger int64
	if j.adopted != nil {
		lastTrigger = j.adopted.lastTrigger
		j.adopted.shares = slices.DeleteFunc(j.adopted.shares, func(o offer) bool {
			if slices.ContainsFunc(o.s.Subtasks, func(r *pb.SubtaskRef) bool { return want(sid(r)) }) {
				mine = append(mine, o)
				return true
			}
			return false
		})
	}
	j.mu.Unlock()
	if len(mine) == 0 {
		return nil
	}
	// After live rescales the attempt runs in its first shares and in
	// successor shares ("KEY/rN"): the executor takes the attempt's key,
	// and numbers the shares of its next rescale after theirs.
	x := newRemoteExecutor(c, j, cfg, spec, attemptBase(mine[0].s.Key))
	x.lastTrigger = lastTrigger
	var finished []dataflow.SubtaskID
	slots := map[*workerConn]map[int]bool{} // the subtask indexes on each worker
	for _, o := range mine {
		sh := &share{key: o.s.Key, w: o.w, done: make(chan struct{}), live: true}
		x.shares = append(x.shares, sh)
		x.reshapes = max(x.reshapes, reshapeNumber(o.s.Key))
		if slots[o.w] == nil {
			slots[o.w] = map[int]bool{}
		} else {
			sh.slotsFixed = true // the worker's first share counts its slots
		}
		for _, r := range o.s.Subtasks {
			x.where[sid(r)] = sh
			slots[o.w][int(r.Subtask)] = true
		}
		for _, r := range o.s.Finished {
			x.finished[sid(r)] = true
			finished = append(finished, sid(r))
		}
	}
	for _, sh := range x.shares {
		if !sh.slotsFixed {
			sh.slotsFixed, sh.fixedSlots = true, len(slots[sh.w])
		}
	}
	c.mu.Lock()
	for _, sh := range x.shares {
		c.executors[sh.key] = x
		sh.w.used += x.slotsOnLocked(sh)
	}
	c.mu.Unlock()
	j.setPlacement(x)
	for _, sh := range x.shares {
		sh.w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Command{Command: &pb.Command{Key: sh.key, Kind: pb.Command_ADOPT}}})
		// A lost share fails the attempt as usual: the job restarts.
		if isLost(sh.w) {
			x.post(endEvent{sh, fmt.Errorf("worker %s lost while its attempt was adopted", sh.w.id)})
		}
	}
	// Its predecessor may have died between the completion of the latest
	// checkpoint and its order to commit; the checkpoints triggered after
	// it never complete.
	var latest int64
	if m := spec.Restore; m != nil {
		latest = int64(m.ID)
		x.Complete(latest)
	}
	for id := max(latest+1, x.lastTrigger-maxAbortedOnAdoption+1); id <= x.lastTrigger; id++ {
		x.Abort(id)
	}
	if len(finished) > 0 && spec.OnFinished != nil {
		x.wg.Add(1)
		go func() { // blocks until the engine's loop runs
			defer x.wg.Done()
			for _, id := range finished {
				spec.OnFinished(id)
			}
		}()
	}
	return x
}

// noteLeaderChange records in job j's record that this coordinator took
// it over, adopting a (nil: restarting it), after waiting since the job
// started here.
func (c *Coordinator) noteLeaderChange(j *job, a *adoption) {
	j.mu.Lock()
	j.adopted = a
	j.rec.LeaderChanges = append(slices.Clone(j.rec.LeaderChanges),
		engine.LeaderChange{At: j.resumed, Epoch: c.lead.Epoch(), Adopted: a != nil, Wait: time.Since(j.resumed)})
	j.mu.Unlock()
	if err := c.save(c.ctx, j); err != nil {
		c.cfg.Log(fmt.Sprintf("recording the leader change of job %s: %v", j.id, err))
	}
}

// maxAbortedOnAdoption bounds the checkpoints an adoption aborts: those
// in flight, which max concurrent checkpoints bounds in practice.
const maxAbortedOnAdoption = 64
