package weir_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
)

// batches groups words three at a time; words waiting for their batch
// are in operator list state, so a checkpoint keeps them.
type batches struct {
	held *weir.OperatorListState[string]
}

func (b *batches) Open(oc *weir.OperatorStateContext) error {
	b.held = weir.NewOperatorListState[string](oc, "held")
	return nil
}

func (b *batches) ProcessElement(ctx *weir.OperatorContext[string], w string) error {
	if b.held.Add(w); len(b.held.Get()) == 3 {
		return b.EndInput(ctx)
	}
	return nil
}

func (b *batches) SnapshotState(int64) error { return nil }

func (b *batches) EndInput(ctx *weir.OperatorContext[string]) error {
	if len(b.held.Get()) > 0 {
		ctx.Emit(strings.Join(b.held.Get(), " "))
		b.held.Clear()
	}
	return nil
}

// A buffer that writes words in batches of three, the last batch at the
// end of input.
func ExampleProcessOperator() {
	p := weir.NewPipeline(weir.WithParallelism(1))
	words := weir.FromSource(p, "words", collection.Of("a", "b", "c", "d", "e"))
	batched := weir.ProcessOperator(words, func() weir.CheckpointedFunction[string, string] { return &batches{} })
	out := collection.NewSink[string]()
	weir.To(batched, "out", out)
	if err := p.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", out.Records())
	// Output: ["a b c" "d e"]
}

// twoLists creates the same operator state twice.
type twoLists struct{ batches }

func (b *twoLists) Open(oc *weir.OperatorStateContext) error {
	weir.NewOperatorListState[string](oc, "held")
	weir.NewUnionListState[string](oc, "held")
	return nil
}

func TestOperatorStateNamedTwiceFailsTheJob(t *testing.T) {
	p := weir.NewPipeline()
	words := weir.FromSource(p, "words", collection.Of("a"))
	weir.To(weir.ProcessOperator(words, func() weir.CheckpointedFunction[string, string] { return &twoLists{} }), "out", collection.NewSink[string]())
	if err := p.Run(context.Background()); err == nil || !strings.Contains(err.Error(), `operator state "held" created twice`) {
		t.Fatalf("Run = %v, want the failure of operator state created twice", err)
	}
}
