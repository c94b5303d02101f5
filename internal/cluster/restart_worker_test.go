package cluster

import (
	"slices"
	"testing"

	"github.com/weir-stream/weir/internal/dataflow"
)

// A stalled input log of an active standby's primary (delivered as
// vertex V+n, see register) restarts nothing: its primary was lost, and
// the standby takes over with what arrived. Before, the stall killed a
// subtask out of the plan's range and crashed the worker. Stalled data
// channels fail their receivers, each once.
func TestAStalledStandbyLogRestartsNothing(t *testing.T) {
	cases := []struct {
		name  string
		chans [][3]int
		want  []stalledReceiver
	}{
		{"the log of vertex 0's subtask 0", [][3]int{{1, 0, 0}}, nil},
		{"two channels of one receiver and a log", [][3]int{{0, 1, 2}, {1, 0, 0}, {0, 1, 3}, {0, 0, 1}},
			[]stalledReceiver{{dataflow.SubtaskID{Vertex: 0, Subtask: 1}, 2}, {dataflow.SubtaskID{Vertex: 0, Subtask: 0}, 1}}},
	}
	for _, c := range cases {
		if got := stalledReceivers(1, c.chans); !slices.Equal(got, c.want) {
			t.Errorf("%s: failed %v, want %v", c.name, got, c.want)
		}
	}
}
