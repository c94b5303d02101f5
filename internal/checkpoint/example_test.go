package checkpoint_test

import (
	"fmt"

	"github.com/weir-stream/weir/internal/checkpoint"
	"github.com/weir-stream/weir/internal/dataflow"
)

// A shell's loop, reduced to its calls: tick, forward acknowledgements,
// carry out actions, report the metadata write.
func Example() {
	source := dataflow.SubtaskID{Vertex: 0, Subtask: 0}
	sink := dataflow.SubtaskID{Vertex: 1, Subtask: 0}
	c, err := checkpoint.New(checkpoint.Config{
		Tasks:             []dataflow.SubtaskID{source, sink},
		Sources:           []dataflow.SubtaskID{source},
		Interval:          3,
		Timeout:           10,
		TolerableFailures: checkpoint.UnlimitedFailures,
	})
	if err != nil {
		panic(err)
	}
	var do func([]checkpoint.Action)
	do = func(actions []checkpoint.Action) {
		for _, a := range actions {
			fmt.Println(a)
			if p, ok := a.(checkpoint.Persist); ok {
				// The shell writes the metadata, then reports it.
				do(c.Stored(p.ID))
			}
		}
	}
	for range 3 {
		do(c.Tick())
	}
	_, actions := c.Ack(1, source, "s3://bucket/chk-1/0.0")
	do(actions)
	result, actions := c.Ack(1, sink, "s3://bucket/chk-1/1.0")
	fmt.Println(result)
	do(actions)
	// Output:
	// Trigger 1 at=3
	// success
	// Persist 1 handles=[0.0:s3://bucket/chk-1/0.0 1.0:s3://bucket/chk-1/1.0]
	// Complete 1
}
