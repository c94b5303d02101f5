package connectortest_test

import (
	"context"
	"fmt"

	"github.com/weir-stream/weir/connector/connectortest"
	"github.com/weir-stream/weir/connectors/collection"
)

// In a connector's tests, call TestSource and TestSink with a *testing.T;
// the Check functions they run can also be called directly.
func ExampleCheckSplit() {
	ctx := context.Background()
	src := collection.Of("a", "b", "c", "d", "e")
	for n := 1; n <= 3; n++ {
		fmt.Println(n, connectortest.CheckSplit(ctx, src, []string{"a", "b", "c", "d", "e"}, n))
	}
	// A wrong expectation is reported precisely.
	fmt.Println(connectortest.CheckSplit(ctx, src, []string{"a", "b", "c", "d", "d"}, 2))
	// Output:
	// 1 <nil>
	// 2 <nil>
	// 3 <nil>
	// parallelism 2: subtasks together do not yield the wanted records: got 5 records, want 5
	// missing 1 distinct records:
	// 	"d" (got 1 of 2)
	// unexpected or repeated 1 distinct records:
	// 	"e" read 1 times, want 0: at subtask 0 #2
}

func ExampleCheckSink() {
	ctx := context.Background()
	sink := collection.NewSink[int]()
	err := connectortest.CheckSink(ctx, sink, []int{1, 2, 3, 4, 5, 6, 7}, 3,
		func() ([]int, error) { return sink.Records(), nil },
		func() ([][]int, error) { return sink.BySubtask(), nil })
	fmt.Println(err, sink.BySubtask())
	// Output:
	// <nil> [[1 4 7] [2 5] [3 6]]
}
