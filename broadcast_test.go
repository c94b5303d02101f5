package weir_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
)

// writesOnTheKeyedSide changes broadcast state where it may only read it.
type writesOnTheKeyedSide struct {
	rules *weir.BroadcastState[string, int]
}

func (f *writesOnTheKeyedSide) OpenBroadcast(bc *weir.BroadcastStateContext) error {
	f.rules = weir.NewBroadcastState[string, int](bc, "rules")
	return nil
}

func (f *writesOnTheKeyedSide) ProcessBroadcastElement(*weir.BroadcastContext[string], int) error {
	return nil
}

func (f *writesOnTheKeyedSide) ProcessElement(_ *weir.KeyedContext[string, string], in string) error {
	f.rules.Put(in, 1)
	return nil
}

func TestBroadcastStateIsReadOnlyOnTheKeyedSide(t *testing.T) {
	p := weir.NewPipeline(weir.WithParallelism(2))
	in := weir.FromSource(p, "in", collection.Of("a", "b"))
	rules := weir.FromSource(p, "rules", collection.Of(1), weir.SourceParallelism(1))
	out := weir.ProcessBroadcast(weir.KeyBy(in, func(s string) string { return s }), rules,
		func() weir.KeyedBroadcastProcessFunction[string, string, int, string] { return &writesOnTheKeyedSide{} },
		weir.Name("judge"))
	weir.To(out, "out", collection.NewSink[string]())
	err := p.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), `broadcast state "rules" is read-only outside ProcessBroadcastElement`) ||
		!strings.Contains(err.Error(), "judge") {
		t.Fatalf("Run = %v, want the failure of a write to broadcast state on the keyed side, naming the operator", err)
	}
}

// twiceNamed creates the same broadcast state twice.
type twiceNamed struct{ writesOnTheKeyedSide }

func (f *twiceNamed) OpenBroadcast(bc *weir.BroadcastStateContext) error {
	weir.NewBroadcastState[string, int](bc, "rules")
	weir.NewBroadcastState[string, int](bc, "rules")
	return nil
}

func TestBroadcastStateNamedTwiceFailsTheJob(t *testing.T) {
	p := weir.NewPipeline()
	in := weir.FromSource(p, "in", collection.Of("a"))
	rules := weir.FromSource(p, "rules", collection.Of(1))
	out := weir.ProcessBroadcast(weir.KeyBy(in, func(s string) string { return s }), rules,
		func() weir.KeyedBroadcastProcessFunction[string, string, int, string] { return &twiceNamed{} })
	weir.To(out, "out", collection.NewSink[string]())
	if err := p.Run(context.Background()); err == nil || !strings.Contains(err.Error(), `broadcast state "rules" created twice`) {
		t.Fatalf("Run = %v, want the failure of a broadcast state created twice", err)
	}
}

type purchase struct {
	Customer string
	Amount   int
	At       int64
}

type limit struct {
	Customer string
	Max      int
}

// overLimit flags orders above their customer's limit. The limits are
// broadcast; each purchase waits in keyed state for its event-time timer,
// by when every limit set before it has arrived.
type overLimit struct {
	limits  *weir.BroadcastState[string, int]
	pending *weir.ListState[purchase, string]
}

func (f *overLimit) Open(sc *weir.StateContext[string]) error {
	f.pending = weir.NewListState[purchase](sc, "pending")
	return nil
}

func (f *overLimit) OpenBroadcast(bc *weir.BroadcastStateContext) error {
	f.limits = weir.NewBroadcastState[string, int](bc, "limits")
	return nil
}

func (f *overLimit) ProcessBroadcastElement(_ *weir.BroadcastContext[string], l limit) error {
	f.limits.Put(l.Customer, l.Max)
	return nil
}

func (f *overLimit) ProcessElement(ctx *weir.KeyedContext[string, string], o purchase) error {
	f.pending.Add(o)
	ctx.RegisterEventTimer(weir.EndOfTime)
	return nil
}

func (f *overLimit) OnTimer(ctx *weir.KeyedContext[string, string], _ int64, _ weir.TimeDomain) error {
	max, ok := f.limits.Get(ctx.Key())
	for _, o := range f.pending.Get() {
		if ok && o.Amount > max {
			ctx.Emit(fmt.Sprintf("%s ordered %d, over the limit of %d", o.Customer, o.Amount, max))
		}
	}
	f.pending.Clear()
	return nil
}

// Orders checked against limits that a broadcast stream sets: every
// subtask holds every limit in broadcast state.
func ExampleProcessBroadcast() {
	p := weir.NewPipeline(weir.WithParallelism(2))
	orders := weir.FromSource(p, "orders", collection.Of(
		purchase{"ann", 50, 1}, purchase{"bob", 500, 2}, purchase{"ann", 300, 3}, purchase{"cy", 900, 4}))
	limits := weir.FromSource(p, "limits", collection.Of(limit{"ann", 100}, limit{"bob", 1000}), weir.SourceParallelism(1))
	flagged := weir.ProcessBroadcast(weir.KeyBy(orders, func(o purchase) string { return o.Customer }), limits,
		func() weir.KeyedBroadcastProcessFunction[string, purchase, limit, string] { return &overLimit{} })
	out := collection.NewSink[string]()
	weir.To(flagged, "out", out)
	if err := p.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(slices.Sorted(slices.Values(out.Records())))
	// Output: [ann ordered 300, over the limit of 100]
}
