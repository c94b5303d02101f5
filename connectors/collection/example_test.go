package collection_test

import (
	"context"
	"fmt"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/collection"
)

func Example() {
	ctx := context.Background()
	src := collection.Of("a", "b", "c", "d", "e")
	sink := collection.NewSink[string]()

	// Copy the source to the sink with two subtasks, as an engine would.
	for s := range 2 {
		info := connector.SubtaskInfo{Subtask: s, Parallelism: 2}
		r, _ := src.Open(ctx, info, nil)
		w, _ := sink.Open(ctx, info)
		buf := make([]string, 8)
		n, _ := r.Read(ctx, buf)
		w.Write(ctx, buf[:n])
		w.Flush(ctx)
		w.Close()
		r.Close()
	}
	fmt.Println(sink.BySubtask())
	fmt.Println(sink.Records())
	// Output:
	// [[a c e] [b d]]
	// [a c e b d]
}
