package harness_test

import (
	"fmt"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/weirtest/harness"
)

// A keyed process function that counts each key's records and emits the
// count when the watermark passes the key's first record by a second.
type countPerSecond struct{ n *weir.ValueState[int, string] }

func (c *countPerSecond) Open(sc *weir.StateContext[string]) error {
	c.n = weir.NewValueState[int](sc, "n")
	return nil
}

func (c *countPerSecond) ProcessElement(ctx *weir.KeyedContext[string, string], word string) error {
	n, ok := c.n.Value()
	if !ok {
		ctx.RegisterEventTimer(ctx.Timestamp() + 1000)
	}
	c.n.Update(n + 1)
	return nil
}

func (c *countPerSecond) OnTimer(ctx *weir.KeyedContext[string, string], t int64, _ weir.TimeDomain) error {
	n, _ := c.n.Value()
	ctx.Emit(fmt.Sprintf("%s: %d", ctx.Key(), n))
	c.n.Clear()
	return nil
}

func ExampleNewProcess() {
	h, err := harness.NewProcess(func(w string) string { return w },
		func() weir.KeyedProcessFunction[string, string, string] { return &countPerSecond{} })
	if err != nil {
		panic(err)
	}
	defer h.Close()

	h.ProcessElement("go", 100)
	h.ProcessElement("go", 600)
	h.ProcessElement("rust", 900)
	n, _, _ := harness.Value[int](h, "go", "n")
	fmt.Println("state of go:", n)

	h.ProcessWatermark(1100) // fires go's timer at 1100
	fmt.Println(h.TakeOutput())
	h.ProcessWatermark(2000) // fires rust's at 1900
	fmt.Println(h.TakeOutput())
	// Output:
	// state of go: 2
	// [{go: 2 1100}]
	// [{rust: 1 1900}]
}

func ExampleNewAggregateWindow() {
	late := weir.NewOutputTag[string]("late")
	h, err := harness.NewAggregateWindow(func(w string) string { return w }, weir.Tumbling(time.Second),
		weir.Count[string](), harness.LateTo(late))
	if err != nil {
		panic(err)
	}
	defer h.Close()

	h.ProcessElement("go", 100)
	h.ProcessElement("go", 900)
	h.ProcessElement("go", 1200)
	h.ProcessWatermark(999) // the window [0, 1000) fires
	h.ProcessElement("go", 500)
	for _, r := range h.Output() {
		fmt.Printf("%s [%d, %d): %d at %d\n", r.Value.Key, r.Value.Window.Start, r.Value.Window.End, r.Value.Value, r.Timestamp)
	}
	fmt.Println("late:", harness.SideOutput(h, late))
	// Output:
	// go [0, 1000): 2 at 999
	// late: [{go 500}]
}

func ExampleRestore() {
	newFn := func() weir.KeyedProcessFunction[string, string, string] { return &countPerSecond{} }
	key := func(w string) string { return w }
	h, _ := harness.NewProcess(key, newFn)
	h.ProcessElement("go", 100)
	snap, _ := h.Snapshot()
	h.Close()

	// A new harness from the snapshot has the state and the timer.
	r, _ := harness.NewProcess(key, newFn, harness.Restore(snap))
	defer r.Close()
	r.ProcessElement("go", 200)
	r.ProcessWatermark(1100)
	fmt.Println(r.PendingEventTimers(), r.Output())
	// Output:
	// 0 [{go: 2 1100}]
}
