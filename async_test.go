package weir_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
)

// lookup is the external call of the tests: a record's square, after a
// delay that varies with the record, so calls finish out of order.
func lookup(ctx context.Context, i int) (string, error) {
	select {
	case <-time.After(time.Duration(i*7%5) * 100 * time.Microsecond):
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return fmt.Sprintf("%d^2=%d", i, i*i), nil
}

func TestAsyncOrderedEmitsInTheRecordsOrder(t *testing.T) {
	in := make([]int, 300)
	for i := range in {
		in[i] = i
	}
	p := weir.NewPipeline(weir.WithParallelism(1))
	out := collection.NewSink[string]()
	var now, most atomic.Int64
	call := func(ctx context.Context, i int) (string, error) {
		n := now.Add(1)
		defer now.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		return lookup(ctx, i)
	}
	weir.To(weir.AsyncOrdered(weir.FromSource(p, "in", collection.Of(in...)), call, weir.AsyncConfig[int, string]{Capacity: 8}), "out", out)
	run(t, p)
	var want []string
	for _, i := range in {
		want = append(want, fmt.Sprintf("%d^2=%d", i, i*i))
	}
	if got := out.Records(); !slices.Equal(got, want) {
		t.Fatalf("got %d results %q..., want the %d in the records' order", len(got), got[:min(5, len(got))], len(want))
	}
	if m := most.Load(); m > 8 {
		t.Fatalf("%d calls ran at once, more than the capacity of 8", m)
	}
}

func TestAsyncUnorderedEmitsAResultBeforeAnEarlierRecordsCall(t *testing.T) {
	released := make(chan struct{})
	var once sync.Once
	call := func(ctx context.Context, i int) (int, error) {
		if i == 0 {
			select { // until the result of record 1 went downstream
			case <-released:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		return i, nil
	}
	p := weir.NewPipeline(weir.WithParallelism(1))
	res := weir.AsyncUnordered(weir.FromSource(p, "in", collection.Of(0, 1)), call, weir.AsyncConfig[int, int]{Capacity: 2})
	seen := weir.Map(res, func(i int) int {
		if i == 1 {
			once.Do(func() { close(released) })
		}
		return i
	})
	out := collection.NewSink[int]()
	weir.To(seen, "out", out)
	run(t, p)
	if got := out.Records(); !slices.Equal(got, []int{1, 0}) {
		t.Fatalf("got %v, want [1 0]: the finished call's result first", got)
	}
}

type stamped struct{ I, At int64 }

// Results reordered by an unordered operator never come after a
// watermark that passed them: a window downstream counts every one.
func TestAsyncUnorderedResultsAreNeverLate(t *testing.T) {
	var in []stamped
	for i := range int64(2000) {
		in = append(in, stamped{i, i})
	}
	p := weir.NewPipeline(weir.WithParallelism(2), weir.WithWatermarkInterval(time.Millisecond))
	src := weir.FromSource(p, "in", sliceSource[stamped]{items: in, one: true},
		weir.WithTimestamps(func(s stamped) int64 { return s.At }, 0))
	res := weir.AsyncUnordered(src, func(ctx context.Context, s stamped) (stamped, error) {
		_, err := lookup(ctx, int(s.I))
		return s, err
	}, weir.AsyncConfig[stamped, stamped]{Capacity: 16})
	w := weir.WindowBy(weir.KeyBy(res, func(s stamped) int64 { return s.I % 3 }), weir.Tumbling(100*time.Millisecond))
	counts := weir.AggregateWindow(w, weir.Count[stamped]())
	out := collection.NewSink[weir.Windowed[int64, int64]]()
	weir.To(counts, "out", out)
	run(t, p)
	var total int64
	for _, c := range out.Records() {
		total += c.Value
	}
	if total != int64(len(in)) {
		t.Fatalf("the windows counted %d results of %d records: some came after the watermark", total, len(in))
	}
}

func TestAsyncTimeoutGivesTheHandlersResult(t *testing.T) {
	p := weir.NewPipeline(weir.WithParallelism(1))
	call := func(ctx context.Context, i int) (string, error) {
		if i%2 == 1 {
			<-ctx.Done() // never answers
			return "", ctx.Err()
		}
		return fmt.Sprint(i), nil
	}
	res := weir.AsyncOrdered(weir.FromSource(p, "in", collection.Of(0, 1, 2, 3)), call, weir.AsyncConfig[int, string]{
		Timeout: time.Millisecond, OnTimeout: func(i int) (string, error) { return fmt.Sprintf("%d?", i), nil }})
	out := collection.NewSink[string]()
	weir.To(res, "out", out)
	run(t, p)
	if got, want := out.Records(), []string{"0", "1?", "2", "3?"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestAsyncFailures(t *testing.T) {
	hang := func(ctx context.Context, i int) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	broken := func(context.Context, int) (int, error) { return 0, errors.New("service down") }
	panics := func(context.Context, int) (int, error) { panic("bad lookup") }
	for _, c := range []struct {
		name string
		call func(context.Context, int) (int, error)
		cfg  weir.AsyncConfig[int, int]
		want string
	}{
		{"a timeout without a handler", hang, weir.AsyncConfig[int, int]{Timeout: time.Millisecond}, "lookup: an async call timed out after 1ms"},
		{"an error", broken, weir.AsyncConfig[int, int]{}, "lookup: async call: service down"},
		{"a panic", panics, weir.AsyncConfig[int, int]{}, "the call panicked: bad lookup"},
		{"a negative capacity", broken, weir.AsyncConfig[int, int]{Capacity: -1}, `async operator "lookup": capacity -1`},
		{"a negative timeout", broken, weir.AsyncConfig[int, int]{Timeout: -time.Second}, `async operator "lookup": timeout -1s`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := weir.NewPipeline(weir.WithParallelism(1))
			weir.To(weir.AsyncUnordered(weir.FromSource(p, "in", collection.Of(1, 2)), c.call, c.cfg, weir.Name("lookup")), "out", collection.NewSink[int]())
			err := p.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Run = %v, want an error with %q", err, c.want)
			}
		})
	}
}

// Prices looked up in an external service, at most 10 lookups at once
// per subtask, in the order of the orders.
func ExampleAsyncOrdered() {
	prices := map[string]int{"apple": 3, "pear": 5}
	lookupPrice := func(ctx context.Context, item string) (string, error) {
		// A real lookup would send a request with ctx.
		return fmt.Sprintf("%s costs %d", item, prices[item]), nil
	}
	p := weir.NewPipeline(weir.WithParallelism(1))
	items := weir.FromSource(p, "items", collection.Of("pear", "apple", "pear"))
	priced := weir.AsyncOrdered(items, lookupPrice, weir.AsyncConfig[string, string]{Capacity: 10, Timeout: time.Second})
	out := collection.NewSink[string]()
	weir.To(priced, "out", out)
	if err := p.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(out.Records())
	// Output: [pear costs 5 apple costs 3 pear costs 5]
}
