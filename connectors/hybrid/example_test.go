package hybrid_test

import (
	"context"
	"fmt"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/connectors/hybrid"
)

// History from one source, then the rest from a second one started
// where the history's event time ended; a job counts the events of each
// ten-second window across the switch.
func Example() {
	history := collection.Of[int64](1_000, 4_000, 9_000, 12_000)
	live := func(_ context.Context, end hybrid.End) (connector.Source[int64], error) {
		fmt.Println("history ended at", end.EventTime)
		// The live source would start at end.EventTime; here it holds
		// only later events.
		return collection.Of[int64](15_000, 21_000), nil
	}
	p := weir.NewPipeline(weir.WithParallelism(1))
	in := weir.FromSource(p, "events", hybrid.New(history, live),
		weir.WithTimestamps(func(t int64) int64 { return t }, time.Second))
	keyed := weir.KeyBy(in, func(int64) string { return "all" })
	counts := weir.AggregateWindow(weir.WindowBy(keyed, weir.Tumbling(10*time.Second)), count{})
	out := collection.NewSink[weir.Windowed[string, int]]()
	weir.To(counts, "out", out)
	if err := p.Run(context.Background()); err != nil {
		panic(err)
	}
	for _, w := range out.Records() {
		fmt.Printf("[%ds, %ds): %d\n", w.Window.Start/1000, w.Window.End/1000, w.Value)
	}
	// Output:
	// history ended at 12000
	// [0s, 10s): 3
	// [10s, 20s): 2
	// [20s, 30s): 1
}

type count struct{}

func (count) Create() int            { return 0 }
func (count) Add(n int, _ int64) int { return n + 1 }
func (count) Merge(a, b int) int     { return a + b }
func (count) Result(n int) int       { return n }
