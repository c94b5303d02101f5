package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

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

func (s *regionSet) Trigger(id int64, how task.TriggerOptions) {
	s.each(func(x Executor) { x.Trigger(id, how) })
}

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

// regionFailover runs the plan's pipelined regions side by side, each
// on an executor of its own, and restarts a failed region alone, by the
// restart strategy, from the latest completed checkpoint, while the
// others run on. In-flight checkpoints are aborted when a region fails
// and triggering pauses until it runs again.
type regionFailover struct {
	regions [][]int // the vertices of each region
	set     *regionSet
	running int               // regions whose executor runs
	due     map[int]time.Time // regions that restart, and when
	// recovering is the region that restarted last (region 0 until one
	// did); its own sinks' output marks the end of the recovery.
	recovering int
}

func newRegionFailover(p *plan.Plan, regions [][]int) *regionFailover {
	set := &regionSet{plan: p, of: map[int]int{}, live: make([]Executor, len(regions))}
	for r, vs := range regions {
		for _, v := range vs {
			set.of[v] = r
		}
	}
	return &regionFailover{regions: regions, set: set, due: map[int]time.Time{}}
}

// restarts returns the subtasks of id's region.
func (f *regionFailover) restarts(id dataflow.SubtaskID) []dataflow.SubtaskID {
	return f.subtasks(f.set.of[id.Vertex])
}

// subtasks returns the subtasks of region r.
func (f *regionFailover) subtasks(r int) []dataflow.SubtaskID {
	return subtasks(f.set.plan, func(v int) bool { return f.set.of[v] == r })
}

func (f *regionFailover) start(ctx context.Context, a *attemptState, restore *store.Metadata) (Executor, error) {
	for r := range f.regions {
		if err := f.deploy(ctx, a, r, restore); err != nil {
			return nil, err
		}
	}
	a.arm(restore != nil)
	return f.set, nil
}

// deploy starts region r from restore and runs it.
func (f *regionFailover) deploy(ctx context.Context, a *attemptState, r int, restore *store.Metadata) error {
	spec := a.spec(ctx, restore)
	spec.Options.Local = func(id dataflow.SubtaskID) bool { return f.set.of[id.Vertex] == r }
	x, err := a.deploy(ctx, spec)
	if err != nil {
		return err
	}
	f.set.live[r] = x
	f.running++
	a.run(ctx, r, x)
	return nil
}

// ended handles the end of region r: the attempt ends once every region
// finished, or at a failure it cannot restart the region from; else the
// region restarts after the restart strategy's delay.
func (f *regionFailover) ended(ctx context.Context, a *attemptState, r int, err error) (bool, error) {
	f.set.live[r] = nil
	f.running--
	var fatal *fatalError
	switch {
	case err == nil:
		return f.running == 0 && len(f.due) == 0, nil
	case ctx.Err() != nil:
		return true, ctx.Err()
	case errors.As(err, &fatal):
		return true, err
	}
	if _, corrupt := CorruptCheckpoint(err); corrupt {
		// The checkpoint the region restores failed verification: the
		// job falls back to an older one, which only a global restart
		// restores.
		return true, err
	}
	if err := a.afterRelease(err); err != nil {
		return true, err
	}
	e := a.e
	restart := f.subtasks(r)
	now := time.Now()
	delay, ferr := e.partialFailure(err, len(restart), now)
	if ferr != nil {
		return true, ferr
	}
	e.cfg.Log(fmt.Sprintf("failure %d: %v; restarting %d of %d subtasks (its region) in %v from %s",
		len(e.report.Recoveries), err, len(restart), e.cfg.Plan.Subtasks(), delay, e.describeRestore()))
	f.due[r] = now.Add(delay)
	f.recovering = r
	a.restartLater(restart, now, f.due[r])
	return false, nil
}

func (f *regionFailover) failed(_ context.Context, _ *attemptState, _ dataflow.SubtaskID, err error) error {
	return err // a region's executor reports no single subtasks
}

// tick redeploys the regions whose restart is due, from the latest
// completed checkpoint, and resumes checkpoints once none waits.
func (f *regionFailover) tick(ctx context.Context, a *attemptState) error {
	for r, at := range f.due {
		if time.Now().Before(at) {
			continue
		}
		m, err := a.e.restoreState(ctx)
		if err != nil {
			return err
		}
		if err := f.deploy(ctx, a, r, m); err != nil {
			return err
		}
		delete(f.due, r)
		a.stall.progressed()
		a.arm(m != nil)
	}
	if len(f.due) == 0 {
		a.coord.Resume()
	}
	return nil
}

func (f *regionFailover) restarted() <-chan struct{} { return nil }
func (f *regionFailover) onRestarted(*attemptState)  {}

func (f *regionFailover) recovered(a *attemptState) (time.Duration, bool) {
	return firstOutputSince(f.set.live[f.recovering], a.restarted)
}

// fail returns at once: the loop's end cancels every region.
func (f *regionFailover) fail(*attemptState, error) bool { return false }
