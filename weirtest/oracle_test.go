package weirtest_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// seeds returns n failure schedules; -short runs fewer, the environment
// variable WEIR_SCHEDULES sets the number for a soak, and WEIR_SEEDS
// (a comma-separated list) names the schedules to run, to repeat one.
func seeds(n int) []uint64 { return seedsShort(n, 2) }

// seedsShort is seeds, with short schedules rather than two under
// -short.
func seedsShort(n, short int) []uint64 {
	if list := os.Getenv("WEIR_SEEDS"); list != "" {
		var out []uint64
		for _, f := range strings.Split(list, ",") {
			s, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
			if err != nil {
				panic(fmt.Sprintf("WEIR_SEEDS=%q: %v", list, err))
			}
			out = append(out, s)
		}
		return out
	}
	if testing.Short() {
		n = short
	}
	if s, err := strconv.Atoi(os.Getenv("WEIR_SCHEDULES")); err == nil && s > 0 {
		n = s
	}
	first := uint64(1)
	if f, err := strconv.ParseUint(os.Getenv("WEIR_FIRST_SCHEDULE"), 10, 64); err == nil && f > 0 {
		first = f // a soak run in parts goes on where the last one stopped
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = first + uint64(i)
	}
	return out
}

// schedulesPerJob is the number of failure schedules per job and guarantee:
// three jobs make 30 per guarantee. CI's steps under the pebble state
// backend and under the race detector run -short, two schedules each,
// and start past the ones this run takes (WEIR_FIRST_SCHEDULE, see
// scripts/test.sh): 14 distinct schedules per job and guarantee in all.
// Longer runs are scripts/soak.sh's.
const schedulesPerJob = 10

var guarantees = []weir.Guarantee{weir.ExactlyOnce, weir.AtLeastOnce, weir.AtMostOnce}

// variant is a guarantee with a way of taking checkpoints.
type variant struct {
	name string
	g    weir.Guarantee
	ck   weir.CheckpointConfig
}

// variants are the guarantees, plus exactly-once with unaligned
// checkpoints and with aligned checkpoints that switch to unaligned after
// a 1ms wait.
var variants = []variant{
	{"exactly-once", weir.ExactlyOnce, weir.CheckpointConfig{}},
	{"at-least-once", weir.AtLeastOnce, weir.CheckpointConfig{}},
	{"at-most-once", weir.AtMostOnce, weir.CheckpointConfig{}},
	{"exactly-once-unaligned", weir.ExactlyOnce, weir.CheckpointConfig{Unaligned: true}},
	{"exactly-once-aligned-timeout", weir.ExactlyOnce, weir.CheckpointConfig{AlignedTimeout: time.Millisecond}},
}

type event struct {
	Key  int64
	Time int64
}

// events is a throttled generated source: n events over about n/rate
// seconds, so that failures land mid-run.
func events(p *weir.Pipeline, name string, n int64, seed uint64) weir.Stream[event] {
	src := generator.New(n, func(i int64) event {
		return event{Key: int64(generator.Mix(seed, uint64(i)) % 40), Time: i}
	}, generator.WithRate(100_000))
	return weir.FromSource(p, name, src, weir.WithTimestamps(func(e event) int64 { return e.Time }, 0))
}

type countAgg struct{}

func (countAgg) Create() int64              { return 0 }
func (countAgg) Add(n int64, _ event) int64 { return n + 1 }
func (countAgg) Merge(a, b int64) int64     { return a + b }
func (countAgg) Result(n int64) int64       { return n }

type windowCount = weir.Windowed[int64, int64]

func windowJob(p *weir.Pipeline, sink connector.Sink[windowCount]) {
	w := weir.WindowBy(weir.KeyBy(events(p, "events", 20_000, 1), func(e event) int64 { return e.Key }), weir.Tumbling(500*time.Millisecond))
	weir.To(weir.AggregateWindow(w, countAgg{}), "sink", sink)
}

type window struct {
	Key int64
	Win weir.Window
}

// compareCounts checks windowed counts, whose values change (rather than
// repeat) under failures: at-least-once may over-count but never loses a
// window or under-counts it in its last firing; at-most-once never counts
// an event twice, so the counts of a window sum to at most the reference.
func compareCounts(g weir.Guarantee) func([]windowCount, []weirtest.Written[windowCount], *weir.Report) error {
	return func(ref []windowCount, got []weirtest.Written[windowCount], rep *weir.Report) error {
		want := map[window]int64{}
		for _, r := range ref {
			want[window{r.Key, r.Window}] = r.Value
		}
		best, sum := map[window]int64{}, map[window]int64{}
		for _, w := range got {
			k := window{w.Value.Key, w.Value.Window}
			if _, ok := want[k]; !ok {
				return fmt.Errorf("window %+v is not in the failure-free output", k)
			}
			best[k] = max(best[k], w.Value.Value)
			sum[k] += w.Value.Value
		}
		switch g {
		case weir.ExactlyOnce:
			return weirtest.Equal(ref, got)
		case weir.AtLeastOnce:
			for k, n := range want {
				if best[k] < n {
					return fmt.Errorf("window %+v counted at most %d, want at least %d: events were lost", k, best[k], n)
				}
			}
		case weir.AtMostOnce:
			for k, n := range sum {
				if n > want[k] {
					return fmt.Errorf("window %+v counted %d in all, more than the %d of the failure-free run", k, n, want[k])
				}
			}
		}
		return nil
	}
}

func TestOracleKeyedWindowAggregation(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			res := weirtest.Check(t, windowJob, weirtest.Options[windowCount]{Guarantee: v.g, Checkpoints: v.ck, Seeds: seeds(schedulesPerJob), Compare: compareCounts(v.g)})
			report(t, res)
		})
	}
}

type pair struct {
	A, B int64
}

// joinJob joins two streams by key within 10ms of event time.
func joinJob(p *weir.Pipeline, sink connector.Sink[pair]) {
	a := weir.KeyBy(events(p, "left", 10_000, 1), func(e event) int64 { return e.Key })
	b := weir.KeyBy(events(p, "right", 10_000, 2), func(e event) int64 { return e.Key })
	joined := weir.IntervalJoin(a, b, 0, 10*time.Millisecond, func(x, y event) pair { return pair{x.Time, y.Time} })
	weir.To(joined, "sink", sink)
}

func TestOracleTwoInputJoin(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			o := weirtest.Options[pair]{Guarantee: v.g, Checkpoints: v.ck, Seeds: seeds(schedulesPerJob)}
			if v.g == weir.AtLeastOnce {
				// The join's state can hold a record twice after a
				// restore (weirtest.NothingLost).
				o.Compare = func(ref []pair, got []weirtest.Written[pair], _ *weir.Report) error {
					return weirtest.NothingLost(ref, got)
				}
			}
			res := weirtest.Check(t, joinJob, o)
			report(t, res)
		})
	}
}

// dedupe keeps, per key, the values seen in map state and drops repeats.
type dedupe struct {
	seen *weir.MapState[int64, bool, int64]
}

func (d *dedupe) Open(sc *weir.StateContext[int64]) error {
	d.seen = weir.NewMapState[int64, bool](sc, "seen")
	return nil
}

func (d *dedupe) ProcessElement(ctx *weir.KeyedContext[int64, event], e event) error {
	if _, dup := d.seen.Get(e.Time); !dup {
		d.seen.Put(e.Time, true)
		ctx.Emit(e)
	}
	return nil
}

// shuffleJob unions two sources (one of them rebalanced and mapped),
// shuffles by key into a stateful operator and writes every record.
func shuffleJob(p *weir.Pipeline, sink connector.Sink[event]) {
	a := events(p, "a", 10_000, 1)
	b := weir.Map(weir.Rebalance(events(p, "b", 10_000, 2)), func(e event) event { return event{e.Key, e.Time + 1_000_000} })
	u := weir.Union(a, b)
	out := weir.Process(weir.KeyBy(u, func(e event) int64 { return e.Key }), func() weir.KeyedProcessFunction[int64, event, event] { return &dedupe{} })
	weir.To(out, "sink", sink)
}

func TestOracleShuffleAndUnion(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			res := weirtest.Check(t, shuffleJob, weirtest.Options[event]{Guarantee: v.g, Checkpoints: v.ck, Seeds: seeds(schedulesPerJob)})
			report(t, res)
		})
	}
}

func report(t *testing.T, res weirtest.Result) {
	t.Helper()
	t.Logf("%d runs, %d failures injected, %d recoveries, %d checkpoints completed", res.Runs, res.Injected, res.Recoveries, res.Completed)
	if res.Injected == 0 {
		t.Fatal("no failure was injected in any run: the test proved nothing")
	}
}
