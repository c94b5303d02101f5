// Command tutorial is the pipeline of the README's five-minute tutorial.
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/connectors/stdout"
)

type Click struct {
	User string
	At   int64 // event time, epoch milliseconds
}

// countClicks is an Aggregator: how a window folds its records.
type countClicks struct{}

func (countClicks) Create() int            { return 0 }
func (countClicks) Add(n int, _ Click) int { return n + 1 }
func (countClicks) Merge(a, b int) int     { return a + b }
func (countClicks) Result(n int) int       { return n }

func main() {
	// 1. A pipeline with two parallel subtasks per operator.
	p := weir.NewPipeline(weir.WithParallelism(2))

	// 2. A source. Records get their event time from the At field, and may
	//    arrive up to 5 seconds out of order before they count as late.
	clicks := weir.FromSource(p, "clicks",
		collection.Of(Click{"ann", 1_000}, Click{"bob", 2_000}, Click{"ann", 61_000}),
		weir.WithTimestamps(func(c Click) int64 { return c.At }, 5*time.Second))

	// 3. Transform: drop bots, key by user, count per one-minute window.
	humans := weir.Filter(clicks, func(c Click) bool { return c.User != "bot" })
	perUser := weir.KeyBy(humans, func(c Click) string { return c.User })
	counts := weir.AggregateWindow(weir.WindowBy(perUser, weir.Tumbling(time.Minute)), countClicks{})

	// 4. A sink: JSON lines on standard output.
	weir.To(counts, "print", stdout.JSON[weir.Windowed[string, int]]())

	// 5. Run until the bounded input is exhausted.
	if err := p.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
}
