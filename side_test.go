package weir_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weir-stream/weir"
)

// sideInts returns 0..n-1.
func sideInts(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

func sortedOf[T any](s *sink[T], less func(a, b T) bool) []T { return s.sorted(less) }

func lessI(a, b int64) bool { return a < b }

func TestProcessStreamSplitsRecordsBetweenMainAndSideOutputs(t *testing.T) {
	in := sideInts(1000)
	p := weir.NewPipeline(weir.WithParallelism(3))
	src := weir.FromSource(p, "ints", sliceSource[int64]{items: in})
	odd := weir.NewOutputTag[string]("odd")
	big := weir.NewOutputTag[int64]("big")
	even := weir.ProcessStream(src, func(ctx *weir.RecordContext[int64], v int64) error {
		if v%2 == 1 {
			weir.Output(ctx, odd, fmt.Sprint(v))
		} else {
			ctx.Emit(v)
		}
		if v >= 990 {
			weir.Output(ctx, big, v)
		}
		return nil
	})
	mainOut, oddOut, bigOut := &sink[int64]{}, &sink[string]{}, &sink[int64]{}
	weir.To(even, "even", mainOut)
	weir.To(weir.SideOutputOf(even, odd), "odd", oddOut)
	weir.To(weir.SideOutputOf(even, big), "big", bigOut)
	run(t, p)

	var wantEven, wantBig []int64
	var wantOdd []string
	for _, v := range in {
		if v%2 == 1 {
			wantOdd = append(wantOdd, fmt.Sprint(v))
		} else {
			wantEven = append(wantEven, v)
		}
		if v >= 990 {
			wantBig = append(wantBig, v)
		}
	}
	slices.Sort(wantOdd)
	if got := sortedOf(mainOut, lessI); !slices.Equal(got, wantEven) {
		t.Errorf("main output: got %d records, want %d", len(got), len(wantEven))
	}
	if got := sortedOf(oddOut, func(a, b string) bool { return a < b }); !slices.Equal(got, wantOdd) {
		t.Errorf("odd side output: got %d records, want %d", len(got), len(wantOdd))
	}
	if got := sortedOf(bigOut, lessI); !slices.Equal(got, wantBig) {
		t.Errorf("big side output: got %v, want %v", got, wantBig)
	}
}

// A keyed process function sends records above its key's running maximum
// to the main output and the others to a side output.
func TestKeyedProcessFunctionEmitsToSideOutput(t *testing.T) {
	events := []ev{{"a", 5}, {"b", 1}, {"a", 3}, {"a", 7}, {"b", 1}, {"b", 4}, {"a", 6}}
	p := weir.NewPipeline(weir.WithParallelism(2))
	src := weir.FromSource(p, "events", sliceSource[ev]{items: events, one: true}, weir.SourceParallelism(1))
	notNew := weir.NewOutputTag[ev]("not-new")
	maxes := weir.Process(weir.KeyBy(src, evKey), func() weir.KeyedProcessFunction[string, ev, ev] {
		return &runningMax{}
	})
	mainOut, sideOut := &sink[ev]{}, &sink[ev]{}
	weir.To(maxes, "max", mainOut)
	weir.To(weir.SideOutputOf(maxes, notNew), "rest", sideOut)
	run(t, p)
	byKeyTS := func(a, b ev) bool { return a.Key < b.Key || a.Key == b.Key && a.TS < b.TS }
	wantMain := []ev{{"a", 5}, {"a", 7}, {"b", 1}, {"b", 4}}
	wantSide := []ev{{"a", 3}, {"a", 6}, {"b", 1}}
	if got := mainOut.sorted(byKeyTS); !slices.Equal(got, wantMain) {
		t.Errorf("main: got %v, want %v", got, wantMain)
	}
	if got := sideOut.sorted(byKeyTS); !slices.Equal(got, wantSide) {
		t.Errorf("side: got %v, want %v", got, wantSide)
	}
}

type runningMax struct {
	max *weir.ValueState[int64, string]
}

func (f *runningMax) Open(sc *weir.StateContext[string]) error {
	f.max = weir.NewValueState[int64](sc, "max")
	return nil
}

func (f *runningMax) ProcessElement(ctx *weir.KeyedContext[string, ev], e ev) error {
	if m, ok := f.max.Value(); ok && e.TS <= m {
		weir.Output(ctx, weir.NewOutputTag[ev]("not-new"), e) // tags are known by name
		return nil
	}
	f.max.Update(e.TS)
	ctx.Emit(e)
	return nil
}

// A window function sends windows with few records to a side output, and
// late records go to another: both are side outputs of the one operator.
func TestProcessWindowEmitsToSideOutputBesideLateData(t *testing.T) {
	events := []ev{{"a", 100}, {"a", 200}, {"b", 300}, {"a", 1100}, {"b", 2500}, {"a", 500}, {"a", 2600}}
	p, src := orderedPipeline(events, 0)
	small := weir.NewOutputTag[string]("small")
	late := weir.NewOutputTag[ev]("late")
	w := weir.WindowBy(weir.KeyBy(src, evKey), weir.Tumbling(time.Second)).LateTo(late)
	counts := weir.ProcessWindowWithContext(w, func(ctx *weir.WindowContext[string, string], recs []ev) error {
		s := fmt.Sprintf("%s [%d,%d) %d", ctx.Key(), ctx.Window().Start, ctx.Window().End, len(recs))
		if len(recs) < 2 {
			weir.Output(ctx, small, s)
			return nil
		}
		ctx.Emit(s)
		return nil
	})
	mainOut, smallOut, lateOut := &sink[string]{}, &sink[string]{}, &sink[ev]{}
	weir.To(counts, "main", mainOut)
	weir.To(weir.SideOutputOf(counts, small), "small", smallOut)
	weir.To(weir.SideOutput(late), "late", lateOut)
	run(t, p)
	str := func(a, b string) bool { return a < b }
	if got, want := mainOut.sorted(str), []string{"a [0,1000) 2"}; !slices.Equal(got, want) {
		t.Errorf("main: got %q, want %q", got, want)
	}
	if got, want := smallOut.sorted(str), []string{"a [1000,2000) 1", "a [2000,3000) 1", "b [0,1000) 1", "b [2000,3000) 1"}; !slices.Equal(got, want) {
		t.Errorf("small: got %q, want %q", got, want)
	}
	if got, want := lateOut.recs, []ev{{"a", 500}}; !slices.Equal(got, want) {
		t.Errorf("late: got %v, want %v", got, want)
	}
}

func TestSideOutputOfAStreamWithoutSideOutputsFailsTheBuild(t *testing.T) {
	p := weir.NewPipeline()
	src := weir.FromSource(p, "ints", sliceSource[int64]{items: sideInts(3)})
	m := weir.Map(src, func(v int64) int64 { return v }, weir.Name("double"))
	weir.To(weir.SideOutputOf(m, weir.NewOutputTag[int64]("x")), "x", &sink[int64]{})
	_, err := p.Explain()
	if err == nil || !contains(err.Error(), `operator "double" emits no side outputs`) {
		t.Fatalf("got %v, want an error naming the operator", err)
	}
}

func TestSideOutputTakenWithTwoTypesFailsTheBuild(t *testing.T) {
	p := weir.NewPipeline()
	src := weir.FromSource(p, "ints", sliceSource[int64]{items: sideInts(3)})
	s := weir.ProcessStream(src, func(ctx *weir.RecordContext[int64], v int64) error { return nil }, weir.Name("split"))
	weir.To(weir.SideOutputOf(s, weir.NewOutputTag[int64]("x")), "x1", &sink[int64]{})
	weir.To(weir.SideOutputOf(s, weir.NewOutputTag[string]("x")), "x2", &sink[string]{})
	_, err := p.Explain()
	if err == nil || !contains(err.Error(), `side output "x" of operator "split" carries int64, not string`) {
		t.Fatalf("got %v", err)
	}
}

// A count window fires at the event time of the record that filled it;
// what its function sends to a side output carries that time too, as
// its main output does, not GlobalWindow's MaxTimestamp.
func TestSideOutputsOfCountWindowsCarryTheFiringTime(t *testing.T) {
	events := []ev{{"a", 100}, {"a", 200}, {"b", 300}, {"a", 400}, {"b", 500}}
	p, src := orderedPipeline(events, 0)
	side := weir.NewOutputTag[string]("side")
	fired := weir.ProcessWindowWithContext(weir.CountWindow(weir.KeyBy(src, evKey), 2), func(ctx *weir.WindowContext[string, string], recs []ev) error {
		ctx.Emit(ctx.Key())
		weir.Output(ctx, side, ctx.Key())
		return nil
	})
	stamped := func(what string, s weir.Stream[string]) weir.Stream[string] {
		return weir.ProcessStream(s, func(ctx *weir.RecordContext[string], key string) error {
			ctx.Emit(fmt.Sprintf("%s %s at %d", what, key, ctx.Timestamp()))
			return nil
		})
	}
	out := &sink[string]{}
	weir.To(weir.Union(stamped("main", fired), stamped("side", weir.SideOutputOf(fired, side))), "out", out)
	run(t, p)
	want := []string{"main a at 200", "main b at 500", "side a at 200", "side b at 500"}
	if got := out.sorted(func(a, b string) bool { return a < b }); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
