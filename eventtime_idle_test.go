package weir_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/weirtest"
)

// twoPhaseSource is an unbounded source of two subtasks that never ends:
// subtask 0 reads first, then waits; subtask 1 waits until released,
// then reads second. Each reads its events and then nothing.
type twoPhaseSource struct {
	first, second []ev
	release       <-chan struct{}
}

func (s twoPhaseSource) Open(_ context.Context, info connector.SubtaskInfo, _ connector.Position) (connector.Reader[ev], error) {
	if info.Subtask == 0 {
		return &twoPhaseReader{items: s.first}, nil
	}
	return &twoPhaseReader{items: s.second, wait: s.release}, nil
}

type twoPhaseReader struct {
	items []ev
	wait  <-chan struct{}
}

func (r *twoPhaseReader) Read(ctx context.Context, buf []ev) (int, error) {
	if r.wait != nil {
		select {
		case <-r.wait:
			r.wait = nil
		default:
			return 0, nil
		}
	}
	n := copy(buf, r.items)
	r.items = r.items[n:]
	return n, nil
}

func (*twoPhaseReader) Position() connector.Position { return nil }
func (*twoPhaseReader) Close() error                 { return nil }

// signalSink collects window results and tells when it holds a number
// of them.
type signalSink struct {
	sink[weir.Windowed[string, int64]]
	mu     sync.Mutex
	notify map[int]chan struct{}
}

func (s *signalSink) Open(context.Context, connector.SubtaskInfo) (connector.Writer[weir.Windowed[string, int64]], error) {
	return s, nil
}

func (s *signalSink) Write(ctx context.Context, b []weir.Windowed[string, int64]) error {
	s.sink.Write(ctx, b)
	s.sink.mu.Lock()
	n := len(s.sink.recs)
	s.sink.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for at, ch := range s.notify {
		if n >= at {
			close(ch)
			delete(s.notify, at)
		}
	}
	return nil
}

// when returns a channel closed once the sink holds n results.
func (s *signalSink) when(n int) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	if s.notify == nil {
		s.notify = map[int]chan struct{}{}
	}
	s.notify[n] = ch
	return ch
}

// withoutWindowOf drops the brute-force results of the window holding ts.
func withoutWindowOf(results []string, ts, size int64) []string {
	start := ts - ts%size
	suffix := fmt.Sprintf(" [%d,%d) ", start, start+size)
	return slices.DeleteFunc(results, func(r string) bool { return strings.Contains(r, suffix) })
}

// One subtask of AssignTimestamps gets no record while the other reads
// its events: given WithIdleness it goes idle, and the windows after it
// fire on the other's watermark alone. Then it reads events of its own,
// active again, while the first, with no more records, goes idle: the
// later windows fire on its watermark. The source never ends, so no
// final watermark fires anything; without idleness the windows wait for
// ever and the watchdog stops the run with a dump of who waits.
func TestAssignTimestampsWithIdlenessFiresWindowsPastASubtaskWithoutRecords(t *testing.T) {
	const size = 100
	var first, second []ev
	for i := range 400 {
		first = append(first, ev{Key: fmt.Sprintf("k%d", i%3), TS: int64(i*25 - (i*13)%40)})
	}
	first = append(first, ev{Key: "mark", TS: 20_000}) // moves the watermark past every window of the rest
	for i := range 300 {
		second = append(second, ev{Key: fmt.Sprintf("k%d", i%4), TS: 30_000 + int64(i*30-(i*7)%40)})
	}
	second = append(second, ev{Key: "mark", TS: 50_000})
	all := append(slices.Clone(first), second...)
	wantFirst := withoutWindowOf(bruteTumbling(first, size), 20_000, size)
	want := withoutWindowOf(bruteTumbling(all, size), 50_000, size)

	for _, chained := range []bool{true, false} {
		release := make(chan struct{})
		w := weirtest.NewWatchdog(10 * time.Second)
		p := weir.NewPipeline(weir.WithParallelism(2), weir.WithChaining(chained),
			weir.WithWatermarkInterval(time.Millisecond), w.Option())
		src := weir.FromSource(p, "events", twoPhaseSource{first: first, second: second, release: release})
		stamped := weir.AssignTimestamps(src, evTime, 50*time.Millisecond, weir.WithIdleness(20*time.Millisecond))
		out := &signalSink{}
		weir.To(weir.AggregateWindow(weir.WindowBy(weir.KeyBy(stamped, evKey), weir.Tumbling(size*time.Millisecond)), count{}), "out", out)
		firstDone, allDone := out.when(len(wantFirst)), out.when(len(want))

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		errc := make(chan error, 1)
		// The run takes well under a second; the deadline stops a hung
		// one with a dump of every goroutine.
		go func() { errc <- w.Run(ctx, p, 45*time.Second) }()
		for _, step := range []struct {
			done <-chan struct{}
			then func()
		}{{firstDone, func() { close(release) }}, {allDone, cancel}} {
			select {
			case <-step.done:
				step.then()
			case err := <-errc:
				t.Fatalf("chained=%v: the run ended before the windows fired: %v", chained, err)
			}
		}
		if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("chained=%v: %v", chained, err)
		}
		if got := sortedResults(&out.sink); !slices.Equal(got, want) {
			t.Fatalf("chained=%v: got %d windows, want %d:\ngot  %q\nwant %q", chained, len(got), len(want), got, want)
		}
	}
}

func TestWithIdlenessIsCheckedWhenThePipelineIsBuilt(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(p *weir.Pipeline, s weir.Stream[ev])
		want  string
	}{
		{"negative", func(p *weir.Pipeline, s weir.Stream[ev]) {
			weir.To(weir.AssignTimestamps(s, evTime, 0, weir.WithIdleness(-time.Second)), "out", &sink[ev]{})
		}, "idleness -1s must be at least a millisecond"},
		{"another operator", func(p *weir.Pipeline, s weir.Stream[ev]) {
			weir.To(weir.Map(s, func(e ev) ev { return e }, weir.Name("copy"), weir.WithIdleness(time.Second)), "out", &sink[ev]{})
		}, `operator "copy": WithIdleness applies only to AssignTimestamps`},
	} {
		p := weir.NewPipeline()
		c.build(p, weir.FromSource(p, "events", sliceSource[ev]{items: []ev{{"a", 1}}}))
		if err := p.Run(context.Background()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// With idleness a subtask of AssignTimestamps that reads no click (here
// the third of three) marks itself idle after a second without records
// instead of holding the windows back. On this bounded input the final
// watermark fires every window anyway; on unbounded input the windows
// fire once the idle subtask stopped holding them.
func ExampleWithIdleness() {
	p := weir.NewPipeline(weir.WithParallelism(3))
	clicks := weir.FromSource(p, "clicks", collection.Of(userClick{"ann", 1000}, userClick{"bob", 2000}))
	stamped := weir.AssignTimestamps(clicks, func(c userClick) int64 { return c.At }, 5*time.Second,
		weir.WithIdleness(time.Second))
	perUser := weir.KeyBy(stamped, func(c userClick) string { return c.User })
	out := collection.NewSink[weir.Windowed[string, int]]()
	weir.To(weir.AggregateWindow(weir.WindowBy(perUser, weir.Tumbling(time.Minute)), clickCounter{}), "out", out)
	if err := p.Run(context.Background()); err != nil {
		panic(err)
	}
	var lines []string
	for _, r := range out.Records() {
		lines = append(lines, fmt.Sprintf("%s %d-%d: %d", r.Key, r.Window.Start, r.Window.End, r.Value))
	}
	slices.Sort(lines)
	fmt.Println(lines)
	// Output: [ann 0-60000: 1 bob 0-60000: 1]
}
