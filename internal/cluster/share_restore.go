package cluster

import (
	"encoding/json"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// shareRestore returns the JSON of checkpoint m as the coordinator sends
// it to a share that restores subtasks ids of plan p (Deploy.restore, a
// RESTART's restore): every field of m, but the state of only the tasks
// the worker reads to restore them, as engine.ReadState picks them with
// ids as its want — their own, or, when m was taken at another
// parallelism or by another plan (a rescale), those whose key groups,
// positions or unclaimed operators they take; drop is the job's
// AllowNonRestoredState. So a deployment carries the handles of the
// share's subtasks rather than the whole checkpoint's. nil m: nothing to
// restore (nil).
func shareRestore(m *store.Metadata, p *plan.Plan, drop bool, ids []dataflow.SubtaskID) ([]byte, error) {
	if m == nil {
		return nil, nil
	}
	want := make(map[dataflow.SubtaskID]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	if engine.Rescaled(m, p) {
		want = task.Needed(p, engine.RestoreOrigin(m, p, drop), func(id dataflow.SubtaskID) bool { return want[id] })
	}
	narrow := *m
	narrow.Tasks = make([]store.TaskState, 0, len(want))
	for _, t := range m.Tasks {
		if want[t.Task] {
			narrow.Tasks = append(narrow.Tasks, t)
		}
	}
	return json.Marshal(&narrow)
}
