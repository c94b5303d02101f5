package weirtest_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// busyDeepJob is deepJob under backpressure, shaped as Nexmark q5: three
// sources feed a window count per key, whose three subtasks feed a
// second keyed window, so that every task merges three senders'
// barriers and the queues between them are full.
func busyDeepJob(p *weir.Pipeline, sink connector.Sink[windowCount]) {
	src := generator.New(300_000, func(i int64) event {
		return event{Key: int64(generator.Mix(21, uint64(i)) % 300), Time: i}
	}, generator.WithRate(1_000_000))
	s := weir.FromSource(p, "events", src, weir.WithTimestamps(func(e event) int64 { return e.Time }, 0))
	w := weir.WindowBy(weir.KeyBy(s, func(e event) int64 { return e.Key }), weir.Tumbling(20*time.Millisecond))
	counts := weir.AggregateWindow(w, countAgg{}, weir.Name("count"))
	asEvents := weir.Map(counts, func(c windowCount) event { return event{Key: c.Key % 7, Time: c.Window.End - 1} })
	w2 := weir.WindowBy(weir.KeyBy(asEvents, func(e event) int64 { return e.Key }), weir.Tumbling(100*time.Millisecond))
	weir.To(weir.AggregateWindow(w2, countAgg{}, weir.Name("per-bucket")), "sink", sink)
}

// busyConeJob is busyDeepJob with a keyed process function that does not
// say it is deterministic between the window and the second stage: its
// failure restarts the subtasks downstream of it too (the cone), which
// the engine stops while they take snapshots and finish.
func busyConeJob(p *weir.Pipeline, sink connector.Sink[windowCount]) {
	src := generator.New(300_000, func(i int64) event {
		return event{Key: int64(generator.Mix(23, uint64(i)) % 300), Time: i}
	}, generator.WithRate(1_000_000))
	s := weir.FromSource(p, "events", src, weir.WithTimestamps(func(e event) int64 { return e.Time }, 0))
	w := weir.WindowBy(weir.KeyBy(s, func(e event) int64 { return e.Key }), weir.Tumbling(20*time.Millisecond))
	counts := weir.AggregateWindow(w, countAgg{}, weir.Name("count"))
	passed := weir.Process(weir.KeyBy(counts, func(c windowCount) int64 { return c.Key }), func() weir.KeyedProcessFunction[int64, windowCount, event] {
		return weir.ProcessFunc[int64, windowCount, event](func(ctx *weir.KeyedContext[int64, event], c windowCount) error {
			ctx.Emit(event{Key: c.Key % 7, Time: c.Window.End - 1})
			return nil
		})
	}, weir.Name("pass"))
	w2 := weir.WindowBy(weir.KeyBy(passed, func(e event) int64 { return e.Key }), weir.Tumbling(100*time.Millisecond))
	weir.To(weir.AggregateWindow(w2, countAgg{}, weir.Name("per-bucket")), "sink", sink)
}

// Fine-grained failover must never leave a job waiting forever. Four
// failures per run, at random moments and at the named points, under
// backpressure, with checkpoints every 20 ms, so that failures abort
// checkpoints whose barriers are still on their way: a barrier of an
// aborted checkpoint used to start an alignment that could never end,
// and the job hung (the watchdog fails such a run with who waits on
// whom). Six schedules per case, one with -short: under the pebble
// state backend a run of these busy jobs takes about seven times as long
// as in memory, so CI's pebble and race steps try one schedule each,
// other ones than the memory backend's six (WEIR_FIRST_SCHEDULE).
func TestOracleFineGrainedFailoverNeverHangs(t *testing.T) {
	jobs := []struct {
		name string
		job  func(*weir.Pipeline, connector.Sink[windowCount])
	}{{"deep", busyDeepJob}, {"cone", busyConeJob}}
	for _, j := range jobs {
		for _, v := range []variant{variants[0], variants[1]} {
			t.Run(j.name+"/"+v.name, func(t *testing.T) {
				checkNeverHangs(t, j.job, v)
			})
		}
	}
}

func checkNeverHangs(t *testing.T, job func(*weir.Pipeline, connector.Sink[windowCount]), v variant) {
	res := weirtest.Check(t, job, weirtest.Options[windowCount]{
		Guarantee: v.g, Seeds: seedsShort(6, 1), Failures: 4, Parallelism: 3, Checkpoints: v.ck, Compare: compareCounts(v.g),
		Options: []weir.Option{weir.WithFailover(weir.FineGrainedFailover)},
	})
	if res.Injected == 0 || res.Recoveries == 0 {
		t.Fatalf("no failure was injected or recovered from: %+v", res)
	}
}

// lastCommitFails is a transactional sink whose first commit of a
// transaction pre-committed after all n records were written fails once:
// the commit of the final checkpoint, which the job completes after every
// task finished and then releases the finished tasks.
type lastCommitFails struct {
	*weirtest.Sink[int64]
	n       int64
	written *atomic.Int64
	failed  *atomic.Bool
	mu      *sync.Mutex
	last    map[string]bool // transactions pre-committed after all records
}

func (s lastCommitFails) Open(ctx context.Context, info connector.SubtaskInfo) (connector.Writer[int64], error) {
	w, err := s.Sink.Open(ctx, info)
	return lastCommitWriter{w, s}, err
}

type lastCommitWriter struct {
	connector.Writer[int64]
	s lastCommitFails
}

func (w lastCommitWriter) Write(ctx context.Context, b []int64) error {
	w.s.written.Add(int64(len(b)))
	return w.Writer.Write(ctx, b)
}

func (w lastCommitWriter) PreCommit(ctx context.Context, id int64) ([]byte, error) {
	txn, err := w.Writer.(connector.Committer).PreCommit(ctx, id)
	if w.s.written.Load() == w.s.n {
		w.s.mu.Lock()
		w.s.last[string(txn)] = true
		w.s.mu.Unlock()
	}
	return txn, err
}

func (w lastCommitWriter) Commit(ctx context.Context, txn []byte) error {
	w.s.mu.Lock()
	last := w.s.last[string(txn)]
	w.s.mu.Unlock()
	if last && w.s.failed.CompareAndSwap(false, true) {
		return errors.New("the commit of the final checkpoint fails once")
	}
	return w.Writer.(connector.Committer).Commit(ctx, txn)
}

func (w lastCommitWriter) Recover(ctx context.Context, restored int64, commit [][]byte) error {
	return w.Writer.(connector.Committer).Recover(ctx, restored, commit)
}

// A sink subtask fails committing the final checkpoint, after which the
// job has released its finished tasks: they exit. Restarted alone, the
// sink would ask them for replays and wait forever; the job restarts as a
// whole from the final checkpoint instead and ends with the exact output.
func TestAFailureAfterTheFinalCheckpointRestartsTheJobAsAWhole(t *testing.T) {
	const n = 2_000
	want := make([]int64, n)
	for i := range want {
		want[i] = int64(i)
	}
	for try := 1; ; try++ {
		var log strings.Builder
		var logMu sync.Mutex
		sink := lastCommitFails{Sink: weirtest.NewSink[int64](), n: n, written: &atomic.Int64{}, failed: &atomic.Bool{}, mu: &sync.Mutex{}, last: map[string]bool{}}
		w := weirtest.NewWatchdog(0)
		p := weir.NewPipeline(weir.WithParallelism(2), weir.WithChaining(false), weir.WithGuarantee(weir.ExactlyOnce),
			weir.WithFailover(weir.FineGrainedFailover), weir.WithCheckpoints(weir.CheckpointConfig{Interval: 500 * time.Millisecond}),
			weir.WithRestartStrategy("fixed-delay", 3, time.Millisecond, 0, 0), w.Option(),
			weir.WithLog(func(s string) { logMu.Lock(); log.WriteString(s + "\n"); logMu.Unlock() }))
		s := weir.Map(weir.FromSource(p, "numbers", generator.New(n, func(i int64) int64 { return i })), func(v int64) int64 { return v })
		weir.To(s, "sink", connector.Sink[int64](sink))
		if err := w.Run(context.Background(), p, 10*time.Minute); err != nil {
			t.Fatalf("try %d: %v\nlog:\n%s", try, err, log.String())
		}
		if err := weirtest.Equal(want, sink.Visible()); err != nil {
			t.Fatalf("try %d: %v\nlog:\n%s", try, err, log.String())
		}
		if strings.Contains(log.String(), "released the finished subtasks, so the job restarts as a whole") {
			return // the failure came after the release, as intended
		}
		if try == 5 {
			t.Fatalf("in 5 tries the failing commit never came after the final checkpoint released the tasks; last log:\n%s", log.String())
		}
	}
}
