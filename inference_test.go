package weir_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
)

// The source options need no type argument, and WithTimestamps takes its
// type from its function.
func TestSourceOptionsNeedNoTypeArgument(t *testing.T) {
	p := weir.NewPipeline(weir.WithParallelism(2))
	clicks := weir.FromSource(p, "clicks", collection.Of(userClick{"ann", 1}, userClick{"bob", 2}, userClick{"ann", 3}),
		weir.SourceParallelism(1), weir.SourceName("click-source"), weir.SourceUID("clicks-v1"),
		weir.WithTimestamps(func(c userClick) int64 { return c.At * 1000 }, time.Second))
	plan, err := p.Explain()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "click-source") {
		t.Errorf("plan does not name the source click-source:\n%s", plan)
	}
	out := collection.NewSink[int64]()
	weir.To(weir.Map(clicks, func(c userClick) int64 { return c.At }), "out", out)
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := out.Records()
	slices.Sort(got)
	if want := []int64{1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// A WithTimestamps function of another record type than the source's is
// an error of the pipeline's build that names the source and both types.
func TestWithTimestampsOfAnotherTypeFailsTheBuildNamingTheSource(t *testing.T) {
	p := weir.NewPipeline()
	weir.To(weir.FromSource(p, "clicks", collection.Of(userClick{"ann", 1}),
		weir.WithTimestamps(func(s string) int64 { return 0 }, 0)), "out", collection.NewSink[userClick]())
	_, err := p.Explain()
	if err == nil {
		t.Fatal("Explain succeeded; want an error for the mismatched WithTimestamps")
	}
	for _, want := range []string{`source "clicks"`, "weir_test.userClick", "string"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if err := p.Run(context.Background()); err == nil {
		t.Error("Run succeeded; want the build error")
	}
}

// running counts records per key: a process function whose constructor
// returns its concrete type.
type running struct {
	n *weir.ValueState[int, string]
}

func (r *running) Open(sc *weir.StateContext[string]) error {
	r.n = weir.NewValueState[int](sc, "n")
	return nil
}

func (r *running) ProcessElement(ctx *weir.KeyedContext[string, string], c userClick) error {
	return r.add(ctx, c.User)
}

func (r *running) ProcessElement1(ctx *weir.KeyedContext[string, string], c userClick) error {
	return r.add(ctx, c.User)
}

func (r *running) ProcessElement2(ctx *weir.KeyedContext[string, string], user string) error {
	return r.add(ctx, user)
}

func (r *running) add(ctx *weir.KeyedContext[string, string], user string) error {
	n, _ := r.n.Value()
	r.n.Update(n + 1)
	ctx.Emit(fmt.Sprintf("%s %d", user, n+1))
	return nil
}

// Process and CoProcess take a constructor of a concrete type
// (func() *running) and infer every type argument; the result matches a
// count computed directly.
func TestProcessAndCoProcessTakeAConstructorOfAConcreteType(t *testing.T) {
	clicks := []userClick{{"ann", 1}, {"bob", 2}, {"ann", 3}, {"ann", 4}, {"bob", 5}}
	users := []string{"bob", "cid"}
	want := func(names []string) []string {
		seen := map[string]int{}
		var out []string
		for _, n := range names {
			seen[n]++
			out = append(out, fmt.Sprintf("%s %d", n, seen[n]))
		}
		slices.Sort(out)
		return out
	}
	var clickUsers []string
	for _, c := range clicks {
		clickUsers = append(clickUsers, c.User)
	}

	p := weir.NewPipeline(weir.WithParallelism(2))
	byUser := weir.KeyBy(weir.FromSource(p, "clicks", collection.Of(clicks...)), func(c userClick) string { return c.User })
	counts := weir.Process(byUser, func() *running { return &running{} })
	out := collection.NewSink[string]()
	weir.To(counts, "out", out)
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := out.Records()
	slices.Sort(got)
	if w := want(clickUsers); !slices.Equal(got, w) {
		t.Errorf("Process: got %v, want %v", got, w)
	}

	p = weir.NewPipeline(weir.WithParallelism(2))
	a := weir.KeyBy(weir.FromSource(p, "clicks", collection.Of(clicks...)), func(c userClick) string { return c.User })
	b := weir.KeyBy(weir.FromSource(p, "users", collection.Of(users...)), func(u string) string { return u })
	out = collection.NewSink[string]()
	weir.To(weir.CoProcess(a, b, func() *running { return &running{} }), "out", out)
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got = out.Records()
	slices.Sort(got)
	// Within a key the order of the two inputs is not fixed, so compare
	// the multiset of final and intermediate counts per key.
	if w := want(append(clickUsers, users...)); !slices.Equal(got, w) {
		t.Errorf("CoProcess: got %v, want %v", got, w)
	}
}

// Source options without type arguments: a single-subtask source with
// event time taken from each record.
func ExampleFromSource() {
	p := weir.NewPipeline(weir.WithParallelism(2))
	clicks := weir.FromSource(p, "clicks", collection.Of(userClick{"ann", 1}, userClick{"bob", 2}),
		weir.SourceParallelism(1),
		weir.WithTimestamps(func(c userClick) int64 { return c.At * 1000 }, time.Second))
	out := collection.NewSink[string]()
	weir.To(weir.Map(clicks, func(c userClick) string { return c.User }), "out", out)
	if err := p.Run(context.Background()); err != nil {
		panic(err)
	}
	got := out.Records()
	slices.Sort(got)
	fmt.Println(got)
	// Output: [ann bob]
}
