package cluster

import (
	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/plan"
)

// What the coordinator tells about itself and its jobs beyond the job
// calls of its control plane: the figures its HTTP server exports as
// metrics, and the plan that JobInfo carries for the dashboard.

// Stats are the coordinator's own figures.
type Stats struct {
	// Workers counts the connected workers, PassiveStandbys those of them
	// that are passive standbys.
	Workers, PassiveStandbys int
	// Slots counts the slots of the connected workers, SlotsUsed those
	// that attempts take.
	Slots, SlotsUsed int
	// Epoch is the coordinator's leadership epoch in its store (0
	// before it leads).
	Epoch uint64
	// Leading says the coordinator leads its store: not a standby (weir
	// coordinator --ha), not superseded, not handed over.
	Leading bool
	// Jobs counts the coordinator's jobs by state, with every state
	// (Waiting, Running, Finished, Stopped, Failed, Cancelled) present.
	Jobs map[string]int
}

// Stats returns the coordinator's figures now. It is safe to call from
// any goroutine.
func (c *Coordinator) Stats() Stats {
	s := Stats{Epoch: c.Epoch(), Leading: c.leads(),
		Jobs: map[string]int{Waiting: 0, Running: 0, Finished: 0, Stopped: 0, Failed: 0, Cancelled: 0}}
	c.mu.Lock()
	jobs := make([]*job, 0, len(c.jobs))
	for _, j := range c.jobs {
		jobs = append(jobs, j)
	}
	for _, w := range c.workers {
		s.Workers++
		if w.passive {
			s.PassiveStandbys++
		}
		s.Slots += w.slots
		s.SlotsUsed += w.used
	}
	c.mu.Unlock()
	for _, j := range jobs {
		j.mu.Lock()
		s.Jobs[j.rec.State]++
		j.mu.Unlock()
	}
	return s
}

// planInfo returns pl as weir run JOB --explain prints it and its tasks
// in plan order; nothing for nil.
func planInfo(pl *plan.Plan) (string, []*pb.PlanTask) {
	if pl == nil {
		return "", nil
	}
	tasks := make([]*pb.PlanTask, len(pl.Vertices))
	for i, v := range pl.Vertices {
		tasks[i] = &pb.PlanTask{Vertex: int32(v.ID), Name: v.Name(), Parallelism: int32(v.Parallelism),
			Source: v.Head().Kind == plan.Source, Sink: v.Tail().Kind == plan.Sink}
	}
	return pl.String(), tasks
}
