package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// Failover is a job's failover strategy: what restarts when a task fails.
type Failover int

const (
	// Global restarts every task of the job from the latest checkpoint.
	Global Failover = iota
	// FineGrained restarts only the failed task's pipelined region (the
	// tasks connected to it by edges), from the latest checkpoint; the
	// other regions keep running and their sources do not rewind.
	FineGrained
)

func (f Failover) String() string {
	if f == FineGrained {
		return "fine-grained"
	}
	return "global"
}

// fineGrained reports whether failures restart single regions: with
// checkpoints (exactly-once and at-least-once).
func (e *engine) fineGrained() bool {
	return e.cfg.Failover == FineGrained && e.checkpoints()
}

// regionSet is the executors of an attempt's regions, seen as one. A
// region that is restarting has no executor; commands skip it.
type regionSet struct {
	plan *plan.Plan
	of   map[int]int // vertex -> region
	live []Executor
}

func (s *regionSet) each(f func(Executor)) {
	for _, x := range s.live {
		if x != nil {
			f(x)
		}
	}
}

func (s *regionSet) region(id dataflow.SubtaskID) Executor { return s.live[s.of[id.Vertex]] }

func (s *regionSet) Run(context.Context) error { panic("engine: a region set is run region by region") }

func (s *regionSet) Kill(id dataflow.SubtaskID, err error) {
	if x := s.region(id); x != nil {
		x.Kill(id, err)
	}
}

func (s *regionSet) Trigger(id int64) { s.each(func(x Executor) { x.Trigger(id) }) }

func (s *regionSet) TriggerSubtask(sid dataflow.SubtaskID, id int64) {
	if x := s.region(sid); x != nil {
		x.TriggerSubtask(sid, id)
	}
}

func (s *regionSet) Complete(id int64) { s.each(func(x Executor) { x.Complete(id) }) }
func (s *regionSet) Abort(id int64)    { s.each(func(x Executor) { x.Abort(id) }) }
func (s *regionSet) Release()          { s.each(func(x Executor) { x.Release() }) }

// Activity sums the activity of the running regions.
func (s *regionSet) Activity() Activity {
	out := Activity{IdleKnown: true}
	s.each(func(x Executor) {
		ar, ok := x.(ActivityReporter)
		if !ok {
			out.IdleKnown = false
			return
		}
		a := ar.Activity()
		out.Records += a.Records
		out.SourceIdle += a.SourceIdle
		out.IdleKnown = out.IdleKnown && a.IdleKnown
	})
	return out
}

// Waits reports what the subtasks of the running regions wait on.
func (s *regionSet) Waits(timeout time.Duration) []task.SubtaskWait {
	var out []task.SubtaskWait
	s.each(func(x Executor) {
		if wr, ok := x.(WaitReporter); ok {
			out = append(out, wr.Waits(timeout)...)
		}
	})
	return out
}

func (s *regionSet) Completed(m *store.Metadata) {
	s.each(func(x Executor) {
		if o, ok := x.(CompletionObserver); ok {
			o.Completed(m)
		}
	})
}

func (s *regionSet) Written() int64 {
	var n int64
	s.each(func(x Executor) { n += x.Written() })
	return n
}

func (s *regionSet) Positions() map[dataflow.SubtaskID][]byte {
	out := map[dataflow.SubtaskID][]byte{}
	s.each(func(x Executor) {
		for k, v := range x.Positions() {
			out[k] = v
		}
	})
	return out
}

// attemptRegions runs the plan's regions side by side and restarts a
// failed region alone, by the restart strategy, from the latest completed
// checkpoint, while the others run on. In-flight checkpoints are aborted
// when a region fails and triggering pauses until it runs again.
func (e *engine) attemptRegions(ctx context.Context, restore *store.Metadata, regions [][]int) error {
	actx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	snaps := make(chan Snapshot)
	fins := make(chan dataflow.SubtaskID)
	type ended struct {
		r   int
		err error
	}
	dones := make(chan ended, len(regions))
	set := &regionSet{plan: e.cfg.Plan, of: map[int]int{}, live: make([]Executor, len(regions))}
	size := make([]int, len(regions))
	for r, vs := range regions {
		for _, v := range vs {
			set.of[v] = r
			size[r] += e.cfg.Plan.Vertices[v].Parallelism
		}
	}
	kills := killClock{in: e.cfg.Failures}
	defer kills.stop()
	deploy := func(r int, restore *store.Metadata) error {
		spec := e.spec(actx, restore, snaps, fins)
		spec.Options.Local = func(id dataflow.SubtaskID) bool { return set.of[id.Vertex] == r }
		deployer := e.cfg.Deploy
		if deployer == nil {
			deployer = e.localDeployer
		}
		x, err := deployer(actx, spec)
		if err != nil {
			return err
		}
		set.live[r] = x
		wg.Add(1)
		go func() {
			defer wg.Done()
			dones <- ended{r, x.Run(actx)}
		}()
		return nil
	}
	for r := range regions {
		if err := deploy(r, restore); err != nil {
			return err
		}
	}
	kills.arm(restore != nil, true)

	a, err := e.newAttemptState(set, true)
	if err != nil {
		return err
	}
	ticker := time.NewTicker(e.cfg.Tick)
	defer ticker.Stop()
	running := len(regions)
	restartAt := map[int]time.Time{}
	for {
		select {
		case d := <-dones:
			set.live[d.r] = nil
			running--
			var fatal *fatalError
			switch {
			case d.err == nil:
				if running == 0 && len(restartAt) == 0 {
					return nil
				}
				continue
			case ctx.Err() != nil:
				return ctx.Err()
			case errors.As(d.err, &fatal):
				return d.err
			}
			if err := a.afterRelease(d.err); err != nil {
				return err
			}
			now := time.Now()
			delay, err := e.partialFailure(d.err, size[d.r], now)
			if err != nil {
				return err
			}
			e.cfg.Log(fmt.Sprintf("failure %d: %v; restarting %d of %d subtasks (its region) in %v from %s",
				len(e.report.Recoveries), d.err, size[d.r], e.cfg.Plan.Subtasks(), delay, e.describeRestore()))
			a.act(a.coord.JobFailed())
			for _, v := range regions[d.r] {
				for i := range e.cfg.Plan.Vertices[v].Parallelism {
					delete(a.finished, dataflow.SubtaskID{Vertex: v, Subtask: i})
				}
			}
			a.allDone = false
			a.restarted, a.recovering = now, d.r
			restartAt[d.r] = now.Add(delay)
			if restartAt[d.r].After(a.restartDue) {
				a.restartDue = restartAt[d.r]
			}
		case <-ticker.C:
			for r, at := range restartAt {
				if time.Now().Before(at) {
					continue
				}
				m, err := e.restoreState(ctx)
				if err != nil {
					return err
				}
				if err := deploy(r, m); err != nil {
					return err
				}
				delete(restartAt, r)
				running++
				a.stall.progressed()
				kills.arm(m != nil, true)
			}
			if len(restartAt) == 0 {
				a.coord.Resume()
			}
			a.tick()
		case ev := <-snaps:
			a.onSnapshot(ev)
		case id := <-fins:
			a.onFinished(id)
		case <-kills.C:
			kills.fired()
			a.killRandom()
		}
		if a.failure != nil {
			return a.failure
		}
	}
}

// partialFailure records a failure after which restarted of the job's
// subtasks restart while the others run on, and returns the restart
// strategy's delay, or a fatal error when the strategy gave up.
func (e *engine) partialFailure(cause error, restarted int, now time.Time) (time.Duration, error) {
	if task.IsPermanent(cause) {
		return 0, &fatalError{cause}
	}
	rec := Recovery{Cause: cause.Error(), FailedAt: now, LastCompleted: e.report.LastCompleted(),
		Restarted: restarted, Subtasks: e.cfg.Plan.Subtasks()}
	if e.latest != nil {
		rec.Restored = int64(e.latest.ID)
	}
	e.report.Recoveries = append(e.report.Recoveries, rec)
	e.publish()
	delay, ok := e.cfg.Restart.Next(now)
	if !ok {
		return 0, &fatalError{fmt.Errorf("restart strategy %s gave up after %d failures: %w", e.cfg.Restart, len(e.report.Recoveries), cause)}
	}
	return delay, nil
}
