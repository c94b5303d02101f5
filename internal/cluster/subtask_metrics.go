package cluster

import (
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/task"
)

// A subtask's metrics on their way from the worker that runs it (its
// heartbeats) to the coordinator's API (JobInfo.subtasks): the same
// counters a single process serves, and the worker's id.

// localSubtaskCounts returns the metrics of subtask id, which rt runs in
// this worker, for a heartbeat.
func localSubtaskCounts(rt *task.Runtime, id dataflow.SubtaskID) *pb.SubtaskCounts {
	m := rt.Metrics(id.Vertex, id.Subtask)
	return &pb.SubtaskCounts{Subtask: ref(id), RecordsIn: m.RecordsIn.Load(), RecordsOut: m.RecordsOut.Load(),
		BytesOut: m.BytesOut.Load(), RecordsWritten: m.Written.Load(), LateDropped: m.LateDropped.Load(),
		Watermark: m.Watermark.Load(), WatermarkHeldBackBy: rt.WatermarkHeldBackBy(id.Vertex, id.Subtask),
		QueueFill: rt.QueueFill(id.Vertex, id.Subtask),
		IdleNs:    m.Idle.Load(), BackpressuredNs: m.Backpressured.Load(), BusyNs: int64(m.Busy(time.Now())),
		Latency: histogram(&m.Latency), EventTimeLatency: histogram(&m.EventTimeLatency)}
}

func histogram(h *task.Histogram) *pb.LatencyHistogram {
	counts, sum := h.Snapshot()
	return &pb.LatencyHistogram{Counts: counts, SumNs: int64(sum)}
}

// indexCounts indexes the subtasks' counters of a heartbeat's attempt
// metrics m (nil: none yet) by subtask.
func indexCounts(m *pb.AttemptMetrics) map[dataflow.SubtaskID]*pb.SubtaskCounts {
	if m == nil {
		return nil
	}
	out := make(map[dataflow.SubtaskID]*pb.SubtaskCounts, len(m.Subtasks))
	for _, r := range m.Subtasks {
		out[sid(r.Subtask)] = r
	}
	return out
}

// reportedCounts returns the counters r of subtask id that worker w last
// reported (nil: not yet), as JobInfo carries them: with the worker's id,
// and Reported unless the worker has not reported the subtask yet.
func reportedCounts(w *workerConn, id dataflow.SubtaskID, r *pb.SubtaskCounts) *pb.SubtaskCounts {
	if r != nil {
		c := proto.Clone(r).(*pb.SubtaskCounts)
		c.WorkerId, c.Reported = w.id, true
		return c
	}
	return &pb.SubtaskCounts{Subtask: ref(id), WorkerId: w.id, Watermark: dataflow.MinWatermark}
}
