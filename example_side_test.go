package weir_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
)

// Lines that do not parse go to a side output instead of failing the job.
func ExampleSideOutputOf() {
	p := weir.NewPipeline()
	lines := weir.FromSource(p, "lines", collection.Of("1", "two", "3"))
	invalid := weir.NewOutputTag[string]("invalid")
	numbers := weir.ProcessStream(lines, func(ctx *weir.RecordContext[int], line string) error {
		n, err := strconv.Atoi(line)
		if err != nil {
			weir.Output(ctx, invalid, line)
			return nil
		}
		ctx.Emit(n)
		return nil
	})
	good, bad := collection.NewSink[int](), collection.NewSink[string]()
	weir.To(numbers, "numbers", good)
	weir.To(weir.SideOutputOf(numbers, invalid), "invalid", bad)
	if err := p.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(good.Records(), bad.Records())
	// Output: [1 3] [two]
}

// A window function emits small windows to a side output.
func ExampleProcessWindowWithContext() {
	p := weir.NewPipeline()
	clicks := weir.FromSource(p, "clicks", collection.Of(
		userClick{"ann", 1_000}, userClick{"bob", 2_000}, userClick{"ann", 3_000}),
		weir.WithTimestamps(func(c userClick) int64 { return c.At }, 0))
	w := weir.WindowBy(weir.KeyBy(clicks, func(c userClick) string { return c.User }), weir.Tumbling(time.Minute))
	quiet := weir.NewOutputTag[string]("quiet")
	busy := weir.ProcessWindowWithContext(w, func(ctx *weir.WindowContext[string, string], cs []userClick) error {
		if len(cs) < 2 {
			weir.Output(ctx, quiet, ctx.Key())
			return nil
		}
		ctx.Emit(fmt.Sprintf("%s: %d clicks", ctx.Key(), len(cs)))
		return nil
	})
	busyOut, quietOut := collection.NewSink[string](), collection.NewSink[string]()
	weir.To(busy, "busy", busyOut)
	weir.To(weir.SideOutputOf(busy, quiet), "quiet", quietOut)
	if err := p.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(busyOut.Records(), quietOut.Records())
	// Output: [ann: 2 clicks] [bob]
}

// Event time parsed from the records after the source, which has none.
func ExampleAssignTimestamps() {
	p := weir.NewPipeline()
	lines := weir.FromSource(p, "lines", collection.Of("ann 1000", "bob 2000", "ann 61000"))
	clicks := weir.Map(lines, func(l string) userClick {
		var c userClick
		fmt.Sscanf(l, "%s %d", &c.User, &c.At)
		return c
	})
	stamped := weir.AssignTimestamps(clicks, func(c userClick) int64 { return c.At }, 5*time.Second)
	perUser := weir.KeyBy(stamped, func(c userClick) string { return c.User })
	counts := weir.AggregateWindow(weir.WindowBy(perUser, weir.Tumbling(time.Minute)), clickCounter{})
	out := collection.NewSink[weir.Windowed[string, int]]()
	weir.To(counts, "out", out)
	if err := p.Run(context.Background()); err != nil {
		panic(err)
	}
	var lines2 []string
	for _, r := range out.Records() {
		lines2 = append(lines2, fmt.Sprintf("%s %d-%d: %d", r.Key, r.Window.Start, r.Window.End, r.Value))
	}
	slices.Sort(lines2)
	fmt.Println(lines2)
	// Output: [ann 0-60000: 1 ann 60000-120000: 1 bob 0-60000: 1]
}
