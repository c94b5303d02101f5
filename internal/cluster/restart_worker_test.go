package cluster

import (
	"testing"

	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// A stalled input log of an active standby's primary (delivered as
// vertex V+n, see register) restarts nothing: its primary was lost, and
// the standby takes over with what arrived. Before, the stall killed a
// subtask out of the plan's range and crashed the worker.
func TestAStalledStandbyLogRestartsNothing(t *testing.T) {
	v := &plan.Vertex{ID: 0, Parallelism: 1}
	rt := task.New(&plan.Plan{Vertices: []*plan.Vertex{v}, MaxParallelism: 128}, task.Options{UpstreamBackup: true})
	var a workerAttempt
	a.restartStalled(rt, [][3]int{{1, 0, 0}}) // vertex 1 = the log of vertex 0's subtask 0
}
