package weir

import (
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// TaskMetrics are the counters of one task (a chain of operators) summed
// over its subtasks.
type TaskMetrics struct {
	Name        string
	Parallelism int
	// Source reports whether the task reads a source.
	Source bool
	// Sink reports whether the task ends in a sink.
	Sink       bool
	RecordsIn  int64
	RecordsOut int64
	BytesOut   int64
	// RecordsWritten counts the records the task's sink wrote.
	RecordsWritten int64
	// Watermark is the lowest input watermark among the subtasks, in epoch
	// milliseconds; MinWatermark before any.
	Watermark int64
}

// MinWatermark is the watermark before any has been received.
const MinWatermark = task.MinWatermark

// Metrics returns the counters per task of the current or latest Run, or
// nil before the first. It is safe to call from any goroutine.
func (p *Pipeline) Metrics() []TaskMetrics {
	rt := p.running.Load()
	if rt == nil {
		return nil
	}
	pl := rt.Plan()
	out := make([]TaskMetrics, len(pl.Vertices))
	for i, v := range pl.Vertices {
		m := TaskMetrics{Name: v.Name(), Parallelism: v.Parallelism, Watermark: task.MaxWatermark,
			Source: v.Head().Kind == plan.Source, Sink: v.Tail().Kind == plan.Sink}
		for s := range v.Parallelism {
			sm := rt.Metrics(v.ID, s)
			m.RecordsIn += sm.RecordsIn.Load()
			m.RecordsOut += sm.RecordsOut.Load()
			m.BytesOut += sm.BytesOut.Load()
			m.RecordsWritten += sm.Written.Load()
			m.Watermark = min(m.Watermark, sm.Watermark.Load())
		}
		out[i] = m
	}
	return out
}
