package generator_test

import (
	"context"
	"fmt"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
)

func Example() {
	ctx := context.Background()
	src := generator.New(6, func(i int64) string { return fmt.Sprintf("event-%d", i) })

	// Subtask 1 of 2 reads the odd indices.
	info := connector.SubtaskInfo{Operator: "events", Subtask: 1, Parallelism: 2}
	r, _ := src.Open(ctx, info, nil)
	buf := make([]string, 2)
	n, _ := r.Read(ctx, buf)
	fmt.Println(buf[:n])
	pos := r.Position()
	r.Close()

	// Reopening at the position resumes with the next record.
	r, _ = src.Open(ctx, info, pos)
	n, _ = r.Read(ctx, buf)
	fmt.Println(buf[:n], pos)
	_, err := r.Read(ctx, buf)
	fmt.Println(err)
	// Output:
	// [event-1 event-3]
	// [event-5] [5]
	// EOF
}

func ExampleMix() {
	type trade struct {
		ID    int64
		Price float64
	}
	const seed = 42
	src := generator.New(-1, func(i int64) trade {
		// A pseudo-random price that depends only on the index.
		return trade{ID: i, Price: 100 + float64(generator.Mix(seed, uint64(i))%1000)/100}
	})
	r, _ := src.Open(context.Background(), connector.SubtaskInfo{Parallelism: 1}, nil)
	buf := make([]trade, 3)
	r.Read(context.Background(), buf)
	for _, t := range buf {
		fmt.Printf("%d %.2f\n", t.ID, t.Price)
	}
	// Output:
	// 0 104.13
	// 1 102.91
	// 2 108.58
}
