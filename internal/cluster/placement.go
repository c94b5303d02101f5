package cluster

import (
	"cmp"
	"slices"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
)

// This file is how a deployment says where the subtasks of an attempt
// run: in runs of consecutive subtasks of one task on one share
// (pb.PlacementRun), which the coordinator encodes (placementRuns) and a
// worker expands into one entry per subtask (expandPlacement). The
// coordinator places consecutive subtasks on one worker (placeLocked),
// so a deployment names about one run per share and task: its size grows
// with the shares, not with subtasks times workers.

// placementRuns says where each subtask in where runs, in runs ordered by
// vertex and subtask; standby marks them as where active standbys run.
// The caller holds the executor's mu.
func placementRuns(where map[dataflow.SubtaskID]*share, standby bool) []*pb.PlacementRun {
	ids := make([]dataflow.SubtaskID, 0, len(where))
	for id := range where {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b dataflow.SubtaskID) int {
		return cmp.Or(cmp.Compare(a.Vertex, b.Vertex), cmp.Compare(a.Subtask, b.Subtask))
	})
	var out []*pb.PlacementRun
	var last *share
	for _, id := range ids {
		sh := where[id]
		if r := lastRun(out); r != nil && sh == last && int(r.Vertex) == id.Vertex && int(r.First+r.Count) == id.Subtask {
			r.Count++
			continue
		}
		last = sh
		out = append(out, &pb.PlacementRun{Vertex: int32(id.Vertex), First: int32(id.Subtask), Count: 1,
			DataAddr: sh.w.dataAddr, DataKey: sh.key, Standby: standby})
	}
	return out
}

func lastRun(runs []*pb.PlacementRun) *pb.PlacementRun {
	if len(runs) == 0 {
		return nil
	}
	return runs[len(runs)-1]
}

// expandPlacement returns the placement of each subtask that runs names,
// in their order.
func expandPlacement(runs []*pb.PlacementRun) []*pb.Placement {
	n := 0
	for _, r := range runs {
		n += int(max(r.Count, 0))
	}
	out := make([]*pb.Placement, 0, n)
	for _, r := range runs {
		for i := range r.Count {
			out = append(out, &pb.Placement{Subtask: &pb.SubtaskRef{Vertex: r.Vertex, Subtask: r.First + i},
				DataAddr: r.DataAddr, DataKey: r.DataKey, Standby: r.Standby})
		}
	}
	return out
}
