package harness_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/weirtest/harness"
)

// splitter emits a key's even numbers and sends the odd ones, and a
// note when its timer fires, to side outputs.
type splitter struct {
	odd   *weir.OutputTag[int64]
	notes *weir.OutputTag[string]
}

func (s splitter) ProcessElement(ctx *weir.KeyedContext[string, string], e event) error {
	if e.N%2 == 1 {
		weir.Output(ctx, s.odd, e.N)
		ctx.RegisterEventTimer(ctx.Timestamp() + 10)
		return nil
	}
	ctx.Emit(fmt.Sprintf("%s even %d", e.Key, e.N))
	return nil
}

func (s splitter) OnTimer(ctx *weir.KeyedContext[string, string], t int64, _ weir.TimeDomain) error {
	weir.Output(ctx, s.notes, fmt.Sprintf("%s timer %d", ctx.Key(), t))
	return nil
}

func TestCaptureSideOutputKeepsWhatTheFunctionEmitsToATag(t *testing.T) {
	odd, notes, other := weir.NewOutputTag[int64]("odd"), weir.NewOutputTag[string]("notes"), weir.NewOutputTag[int64]("other")
	h, err := harness.NewProcess(byKey, func() weir.KeyedProcessFunction[string, event, string] { return splitter{odd, notes} },
		harness.CaptureSideOutput(odd), harness.CaptureSideOutput(notes), harness.CaptureSideOutput(odd))
	must(t, err)
	defer h.Close()
	for i, e := range []event{{"a", 1}, {"a", 2}, {"b", 3}, {"b", 4}, {"a", 5}} {
		must(t, h.ProcessElement(e, int64(100+i)))
	}
	must(t, h.ProcessWatermark(120))
	if got, want := harness.SideOutput(h, odd), []harness.Record[int64]{{Value: 1, Timestamp: 100}, {Value: 3, Timestamp: 102}, {Value: 5, Timestamp: 104}}; !slices.Equal(got, want) {
		t.Errorf("odd: got %v, want %v", got, want)
	}
	if got, want := harness.Values(harness.SideOutput(h, notes)), []string{"a timer 110", "b timer 112", "a timer 114"}; !slices.Equal(got, want) {
		t.Errorf("notes: got %q, want %q", got, want)
	}
	if got, want := harness.Values(h.Output()), []string{"a even 2", "b even 4"}; !slices.Equal(got, want) {
		t.Errorf("main output: got %q, want %q", got, want)
	}
	if got := harness.SideOutput(h, other); got != nil {
		t.Errorf("a tag not captured: got %v, want nil", got)
	}
}

func TestCaptureSideOutputOnAWindowHarnessFailsNamingTheTag(t *testing.T) {
	tag := weir.NewOutputTag[string]("extra")
	_, err := harness.NewReduceWindow(byKey, weir.Tumbling(time.Second), func(a, b event) event { return a },
		harness.CaptureSideOutput(tag))
	if err == nil || !strings.Contains(err.Error(), `side output "extra"`) {
		t.Fatalf("got %v, want an error naming side output \"extra\"", err)
	}
}

// A function that sets odd numbers aside: the harness keeps what it
// emits to the tag it was asked to capture.
func ExampleCaptureSideOutput() {
	odd, notes := weir.NewOutputTag[int64]("odd"), weir.NewOutputTag[string]("notes")
	h, err := harness.NewProcess(byKey, func() weir.KeyedProcessFunction[string, event, string] { return splitter{odd, notes} },
		harness.CaptureSideOutput(odd))
	if err != nil {
		panic(err)
	}
	defer h.Close()
	h.ProcessElement(event{"a", 1}, 100)
	h.ProcessElement(event{"a", 2}, 101)
	fmt.Println(harness.Values(h.Output()), harness.Values(harness.SideOutput(h, odd)))
	// Output: [a even 2] [1]
}
