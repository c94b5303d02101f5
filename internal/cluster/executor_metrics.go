package cluster

import (
	"maps"
	"slices"
	"time"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
)

// An attempt's counters and placement, as the workers' heartbeats report
// them: for the engine's report and the job's status.

// Written sums the records the workers' sinks wrote, as of their latest
// heartbeats.
func (x *remoteExecutor) Written() int64 {
	_, n := x.counts()
	return n
}

// counts sums the records the attempt's sources read and its sinks wrote,
// as of the workers' latest heartbeats.
func (x *remoteExecutor) counts() (read, written int64) {
	for _, sh := range x.sharesNow() {
		sh.w.mu.Lock()
		if m := sh.w.metrics[sh.key]; m != nil {
			read += m.Read
			written += m.Written
		}
		sh.w.mu.Unlock()
	}
	return read, written
}

func (x *remoteExecutor) sharesNow() []*share {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.shares)
}

// subtaskCounts returns the counters of every subtask from the share
// that runs it now, as of its worker's latest heartbeat.
func (x *remoteExecutor) subtaskCounts() []*pb.SubtaskCounts {
	x.mu.Lock()
	where := maps.Clone(x.where)
	x.mu.Unlock()
	// Each share's heartbeat is indexed once, not scanned per subtask.
	reported := map[*share]map[dataflow.SubtaskID]*pb.SubtaskCounts{}
	out := make([]*pb.SubtaskCounts, 0, len(where))
	for id, sh := range where {
		byID, ok := reported[sh]
		if !ok {
			sh.w.mu.Lock()
			byID = indexCounts(sh.w.metrics[sh.key])
			sh.w.mu.Unlock()
			reported[sh] = byID
		}
		out = append(out, reportedCounts(sh.w, id, byID[id]))
	}
	return out
}

// placement returns the subtasks each worker runs, by worker id.
func (x *remoteExecutor) placement() map[string][]dataflow.SubtaskID {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := map[string][]dataflow.SubtaskID{}
	for id, sh := range x.where {
		out[sh.w.id] = append(out[sh.w.id], id)
	}
	return out
}

// FirstOutput returns when the attempt's sinks wrote their first record,
// as the workers reported it.
func (x *remoteExecutor) FirstOutput() time.Time {
	var first int64
	for _, sh := range x.sharesNow() {
		sh.w.mu.Lock()
		if m := sh.w.metrics[sh.key]; m != nil && m.FirstWriteUnixNs != 0 && (first == 0 || m.FirstWriteUnixNs < first) {
			first = m.FirstWriteUnixNs
		}
		sh.w.mu.Unlock()
	}
	if first == 0 {
		return time.Time{}
	}
	return time.Unix(0, first)
}

// Positions is not supported in cluster mode (at-most-once is refused at
// submission).
func (x *remoteExecutor) Positions() map[dataflow.SubtaskID][]byte { return nil }

// Activity sums the records the attempt's subtasks took in and sent out,
// as of the workers' latest heartbeats, for the engine's stall
// detection. The engine asks on every tick, so it adds the sums each
// heartbeat brought (workerConn.records): its cost grows with the
// shares, not with the subtasks. A share whose subtasks moved elsewhere
// adds its last counters, which no longer change: the sum changes only
// when records move. Workers do not report idle sources.
func (x *remoteExecutor) Activity() engine.Activity {
	var a engine.Activity
	for _, sh := range x.sharesNow() {
		sh.w.mu.Lock()
		a.Records += sh.w.records[sh.key]
		sh.w.mu.Unlock()
	}
	return a
}
