package weir_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
)

// A stateless pipeline: map, filter and flat-map, run on two subtasks.
func Example() {
	p := weir.NewPipeline(weir.WithParallelism(2))
	lines := weir.FromSource(p, "lines", collection.Of("to be or", "not to be"))
	words := weir.FlatMap(lines, func(line string, emit func(string)) {
		for _, w := range strings.Fields(line) {
			emit(w)
		}
	})
	upper := weir.Map(words, strings.ToUpper)
	long := weir.Filter(upper, func(w string) bool { return len(w) > 2 })
	out := collection.NewSink[string]()
	weir.To(long, "out", out)
	if err := p.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(out.Records())
	// Output: [NOT]
}

type userClick struct {
	User string
	At   int64 // epoch milliseconds
}

type clickCounter struct{}

func (clickCounter) Create() int                { return 0 }
func (clickCounter) Add(n int, _ userClick) int { return n + 1 }
func (clickCounter) Merge(a, b int) int         { return a + b }
func (clickCounter) Result(n int) int           { return n }

// Clicks per user in tumbling one-minute event-time windows.
func ExampleAggregateWindow() {
	p := weir.NewPipeline(weir.WithParallelism(2))
	clicks := weir.FromSource(p, "clicks", collection.Of(
		userClick{"ann", 1_000}, userClick{"bob", 2_000}, userClick{"ann", 59_000}, userClick{"ann", 61_000}),
		weir.WithTimestamps(func(c userClick) int64 { return c.At }, 5*time.Second))
	perUser := weir.KeyBy(clicks, func(c userClick) string { return c.User })
	counts := weir.AggregateWindow(weir.WindowBy(perUser, weir.Tumbling(time.Minute)), clickCounter{})
	out := collection.NewSink[weir.Windowed[string, int]]()
	weir.To(counts, "out", out)
	if err := p.Run(context.Background()); err != nil {
		panic(err)
	}
	var lines []string
	for _, r := range out.Records() {
		lines = append(lines, fmt.Sprintf("%s %d-%ds: %d", r.Key, r.Window.Start/1000, r.Window.End/1000, r.Value))
	}
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// ann 0-60s: 2
	// ann 60-120s: 1
	// bob 0-60s: 1
}

// total keeps a running sum per key in value state.
type total struct {
	sum *weir.ValueState[int, string]
}

func (t *total) Open(sc *weir.StateContext[string]) error {
	t.sum = weir.NewValueState[int](sc, "sum")
	return nil
}

func (t *total) ProcessElement(ctx *weir.KeyedContext[string, string], c userClick) error {
	n, _ := t.sum.Value()
	t.sum.Update(n + 1)
	if n+1 == 3 {
		ctx.Emit(ctx.Key() + " reached 3 clicks")
	}
	return nil
}

// A keyed process function with value state.
func ExampleProcess() {
	p := weir.NewPipeline(weir.WithParallelism(2))
	clicks := weir.FromSource(p, "clicks", collection.Of(
		userClick{"ann", 1}, userClick{"bob", 2}, userClick{"ann", 3}, userClick{"ann", 4}))
	alerts := weir.Process(weir.KeyBy(clicks, func(c userClick) string { return c.User }),
		func() *total { return &total{} })
	out := collection.NewSink[string]()
	weir.To(alerts, "out", out)
	if err := p.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(out.Records())
	// Output: [ann reached 3 clicks]
}
