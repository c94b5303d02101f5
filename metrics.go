package weir

import (
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// TaskMetrics are the counters of one task (a chain of operators) summed
// over its subtasks.
type TaskMetrics struct {
	Name        string `json:"name"`
	Parallelism int    `json:"parallelism"`
	// Source reports whether the task reads a source.
	Source bool `json:"source"`
	// Sink reports whether the task ends in a sink.
	Sink       bool  `json:"sink"`
	RecordsIn  int64 `json:"records_in"`
	RecordsOut int64 `json:"records_out"`
	BytesOut   int64 `json:"bytes_out"`
	// RecordsWritten counts the records the task's sink wrote.
	RecordsWritten int64 `json:"records_written"`
	// LateDropped counts the records the task's window operators dropped
	// as too late for every window they belong to, for want of a late
	// side output (WindowedStream.LateTo).
	LateDropped int64 `json:"late_records_dropped"`
	// Watermark is the lowest input watermark among the subtasks, in epoch
	// milliseconds; MinWatermark before any.
	Watermark int64 `json:"watermark"`
	// Subtasks holds the same counters per subtask.
	Subtasks []SubtaskMetrics `json:"subtasks"`
}

// SubtaskMetrics are the counters of one subtask.
type SubtaskMetrics struct {
	RecordsIn      int64 `json:"records_in"`
	RecordsOut     int64 `json:"records_out"`
	BytesOut       int64 `json:"bytes_out"`
	RecordsWritten int64 `json:"records_written"`
	LateDropped    int64 `json:"late_records_dropped"`
	Watermark      int64 `json:"watermark"`
	// QueueFill is how full the subtask's input queues are, 0 to 1.
	QueueFill float64 `json:"queue_fill"`
	// Latency and EventTimeLatency are histograms (see LatencyBuckets)
	// of latency-marker ages and, at sinks, event-time latency.
	Latency          Histogram `json:"latency"`
	EventTimeLatency Histogram `json:"event_time_latency"`
	// Idle is the time the subtask waited for input, Backpressured the
	// time it waited for room downstream, Busy the rest since it started.
	Idle          time.Duration `json:"idle_ns"`
	Backpressured time.Duration `json:"backpressured_ns"`
	Busy          time.Duration `json:"busy_ns"`
	// WatermarkHeldBackBy names the input whose watermark is the lowest,
	// holding back this subtask's watermark ("why has my window not
	// fired?"), as "task [subtask n]"; empty for sources and when no input
	// is active.
	WatermarkHeldBackBy string `json:"watermark_held_back_by,omitempty"`
	// Under fine-grained failover: Restarts counts the subtask's restarts
	// on its own, Duplicates the records it received again from a
	// restarted sender and dropped by sequence number, RetainedBytes the
	// output it keeps for replay (upstream backup). Takeovers counts its
	// failures its active standby took over; Standby says it has one
	// running, StandbyLag how many input elements that standby has yet
	// to apply (what a takeover would apply before reading the inputs),
	// StandbyRetainedBytes the output the standby keeps for replay after
	// a takeover (in this process; trimmed, like RetainedBytes, when a
	// checkpoint completes).
	Restarts      int64 `json:"restarts,omitempty"`
	Takeovers     int64 `json:"takeovers,omitempty"`
	Standby       bool  `json:"standby,omitempty"`
	StandbyLag    int64 `json:"standby_lag,omitempty"`
	Duplicates    int64 `json:"duplicates,omitempty"`
	RetainedBytes int64 `json:"retained_bytes,omitempty"`

	StandbyRetainedBytes int64 `json:"standby_retained_bytes,omitempty"`

	// Worker is the id of the cluster worker that runs the subtask, as
	// its coordinator serves it (weir coordinator --http); empty in a
	// single process.
	Worker string `json:"worker,omitempty"`
}

// Add appends s to t's subtasks and counts it in t's totals: the counters
// add up, the watermark is the lowest. A TaskMetrics to add subtasks to
// starts with its Watermark at EndOfTime.
func (t *TaskMetrics) Add(s SubtaskMetrics) {
	t.Subtasks = append(t.Subtasks, s)
	t.RecordsIn += s.RecordsIn
	t.RecordsOut += s.RecordsOut
	t.BytesOut += s.BytesOut
	t.RecordsWritten += s.RecordsWritten
	t.LateDropped += s.LateDropped
	t.Watermark = min(t.Watermark, s.Watermark)
}

// Histogram is a latency histogram: Counts[i] counts durations up to
// LatencyBuckets[i]; the last count those above every bound.
type Histogram struct {
	Counts []int64       `json:"counts"`
	Sum    time.Duration `json:"sum_ns"`
}

// Count returns the number of observations.
func (h Histogram) Count() int64 {
	var n int64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// LatencyBuckets are the upper bounds of the latency histograms.
var LatencyBuckets = task.LatencyBuckets

// MinWatermark is the watermark before any has been received.
const MinWatermark = dataflow.MinWatermark

// Metrics returns the counters per task of the current or latest Run, or
// nil before the first. It is safe to call from any goroutine.
//
// After a live rescale (Rescale) a task's subtasks are those that run
// it now, at its new parallelism: the counters of the subtasks it
// replaced are gone, and those of the new ones start from zero, as after
// a restart.
func (p *Pipeline) Metrics() []TaskMetrics {
	rts := p.running.Load()
	if rts == nil {
		return nil
	}
	pl := rts.plan()
	out := make([]TaskMetrics, len(pl.Vertices))
	for i, v := range pl.Vertices {
		rt := rts.owner(v.ID)
		m := TaskMetrics{Name: v.Name(), Parallelism: v.Parallelism, Watermark: dataflow.MaxWatermark,
			Source: v.Head().Kind == plan.Source, Sink: v.Tail().Kind == plan.Sink}
		for s := range v.Parallelism {
			sm := rt.Metrics(v.ID, s)
			sub := SubtaskMetrics{RecordsIn: sm.RecordsIn.Load(), RecordsOut: sm.RecordsOut.Load(), BytesOut: sm.BytesOut.Load(),
				RecordsWritten: sm.Written.Load(), LateDropped: sm.LateDropped.Load(), Watermark: sm.Watermark.Load(), QueueFill: rt.QueueFill(v.ID, s),
				Restarts: sm.Restarts.Load(), Takeovers: sm.Takeovers.Load(), Duplicates: sm.Duplicates.Load(), RetainedBytes: sm.Retained.Load()}
			sub.StandbyLag, sub.Standby = rt.StandbyLag(v.ID, s)
			sub.StandbyRetainedBytes = rt.StandbyRetained(v.ID, s)
			sub.Latency.Counts, sub.Latency.Sum = sm.Latency.Snapshot()
			sub.Idle, sub.Backpressured = time.Duration(sm.Idle.Load()), time.Duration(sm.Backpressured.Load())
			sub.WatermarkHeldBackBy = rt.WatermarkHeldBackBy(v.ID, s)
			sub.Busy = sm.Busy(time.Now())
			sub.EventTimeLatency.Counts, sub.EventTimeLatency.Sum = sm.EventTimeLatency.Snapshot()
			m.Add(sub)
		}
		out[i] = m
	}
	return out
}

// runtimes are the runtimes of a local attempt: its first, then the
// successors its live rescales started, oldest first. The value is never
// changed: a successor's start stores a longer copy.
type runtimes []*task.Runtime

// plan returns the plan the attempt runs now: the newest runtime's.
func (rs runtimes) plan() *plan.Plan { return rs[len(rs)-1].Plan() }

// owner returns the runtime that runs vertex v now: the newest that runs
// its subtasks.
func (rs runtimes) owner(v int) *task.Runtime {
	for i := len(rs) - 1; i > 0; i-- {
		if rs[i].IsLocal(dataflow.SubtaskID{Vertex: v}) {
			return rs[i]
		}
	}
	return rs[0]
}
