package weir

import (
	"errors"
	"strings"

	"github.com/weir-stream/weir/internal/dataflow"
)

// KillForTest fails subtask i of the running task whose name contains
// name, or that subtask's active standby, as a crash would. It reports
// whether the job runs such a task.
func KillForTest(p *Pipeline, name string, i int, standby bool) bool {
	rts := p.running.Load()
	if rts == nil {
		return false
	}
	for _, v := range rts.plan().Vertices {
		if !strings.Contains(v.Name(), name) {
			continue
		}
		rt := rts.owner(v.ID)
		id := dataflow.SubtaskID{Vertex: v.ID, Subtask: i}
		if standby {
			rt.KillStandby(id, errors.New("killed by the test"))
		} else {
			rt.Kill(id, errors.New("killed by the test"))
		}
		return true
	}
	return false
}
