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

// deepJob has two keyed stages: window counts per key, re-keyed by count
// parity and summed per window. The first stage's windows fire in a
// fixed order under fine-grained failover, so it restarts alone.
func deepJob(p *weir.Pipeline, sink connector.Sink[windowCount]) {
	w := weir.WindowBy(weir.KeyBy(events(p, "events", 20_000, 3), func(e event) int64 { return e.Key }), weir.Tumbling(500*time.Millisecond))
	counts := weir.AggregateWindow(w, countAgg{}, weir.Name("count"))
	asEvents := weir.Map(counts, func(c windowCount) event { return event{Key: c.Value % 2, Time: c.Window.End - 1} })
	w2 := weir.WindowBy(weir.KeyBy(asEvents, func(e event) int64 { return e.Key }), weir.Tumbling(500*time.Millisecond))
	weir.To(weir.AggregateWindow(w2, countAgg{}, weir.Name("parity")), "sink", sink)
}

// sessionJob counts events per key and session window (a gap of 60 ms
// of event time), then counts the sessions by parity of their size per
// tumbling window: session timers of equal time fire in key-hash order
// under fine-grained failover, so the first stage restarts alone.
func sessionJob(p *weir.Pipeline, sink connector.Sink[windowCount]) {
	w := weir.WindowBy(weir.KeyBy(events(p, "events", 20_000, 13), func(e event) int64 { return e.Key }), weir.Session(60*time.Millisecond))
	sessions := weir.AggregateWindow(w, countAgg{}, weir.Name("sessions"))
	asEvents := weir.Map(sessions, func(c windowCount) event { return event{Key: c.Value % 2, Time: c.Window.End - 1} })
	w2 := weir.WindowBy(weir.KeyBy(asEvents, func(e event) int64 { return e.Key }), weir.Tumbling(500*time.Millisecond))
	weir.To(weir.AggregateWindow(w2, countAgg{}, weir.Name("by-parity")), "sink", sink)
}

// rebalancedJob spreads the events round robin over a map, whose
// subtasks merge two input channels in arrival order, then counts them
// per key and window.
func rebalancedJob(p *weir.Pipeline, sink connector.Sink[windowCount]) {
	rebalancedWith(p, sink, 20_000, func(e event) event { return e })
}

func rebalancedWith(p *weir.Pipeline, sink connector.Sink[windowCount], n int64, f func(event) event) {
	m := weir.Map(weir.Rebalance(events(p, "events", n, 9)), f, weir.Name("merge"))
	w := weir.WindowBy(weir.KeyBy(m, func(e event) int64 { return e.Key }), weir.Tumbling(500*time.Millisecond))
	weir.To(weir.AggregateWindow(w, countAgg{}, weir.Name("count")), "sink", sink)
}

// With fine-grained failover in one connected job, failures injected at
// random moments and at the named points of the checkpoint protocol
// restart single subtasks (with upstream backup and replay) or their
// downstream cone, and the output keeps each guarantee.
func TestOracleUpstreamBackup(t *testing.T) {
	forFineGrainedJobs(t, checkFineGrained)
}

// forFineGrainedJobs runs check on the connected jobs of the fine-grained
// oracles, exactly-once and at-least-once with aligned checkpoints.
func forFineGrainedJobs(t *testing.T, check func(*testing.T, func(*weir.Pipeline, connector.Sink[windowCount]), variant)) {
	jobs := []struct {
		name string
		job  func(*weir.Pipeline, connector.Sink[windowCount])
	}{{"one-stage", windowJob}, {"two-stage", deepJob}, {"rebalanced", rebalancedJob}, {"sessions", sessionJob}}
	for _, j := range jobs {
		for _, v := range []variant{variants[0], variants[1]} {
			t.Run(j.name+"/"+v.name, func(t *testing.T) { check(t, j.job, v) })
		}
	}
}

// countingSink counts the writers opened per subtask: one per incarnation.
type countingSink[T any] struct {
	connector.Sink[T]
	mu    *sync.Mutex
	opens map[int]int
}

func (c countingSink[T]) Open(ctx context.Context, info connector.SubtaskInfo) (connector.Writer[T], error) {
	c.mu.Lock()
	c.opens[info.Subtask]++
	c.mu.Unlock()
	return c.Sink.Open(ctx, info)
}

// In one connected job, a window subtask fails, and then, while that one
// recovers, a source subtask upstream of it fails too. Only the two
// failed subtasks restart: the other window subtask never restarts, the
// other source never rewinds, and the output is exactly the failure-free
// one.
func TestUpstreamBackupRestartsOnlyTheFailedSubtasks(t *testing.T) {
	var sourceOpens atomic.Int32
	var windowFailed, sourceFailed atomic.Bool
	var windowDown chan struct{} // closed when the window subtask failed
	mu := &sync.Mutex{}
	job := func(p *weir.Pipeline, sink connector.Sink[windowCount]) {
		src := generator.New(40_000, func(n int64) event {
			return event{Key: int64(generator.Mix(7, uint64(n)) % 40), Time: n}
		}, generator.WithRate(100_000))
		s := weir.FromSource(p, "events", countingSource[event]{src, &sourceOpens, true}, weir.WithTimestamps(func(e event) int64 { return e.Time }, 0))
		s = weir.Map(s, func(e event) event {
			// The source's subtask 0 (even events) waits at event 30,000
			// for the window subtask to fail, then fails too, while that
			// one recovers.
			if e.Time == 30_000 && sourceFailed.CompareAndSwap(false, true) {
				select {
				case <-windowDown:
				case <-time.After(10 * time.Second):
				}
				panic(errors.New("the source fails while its consumer recovers"))
			}
			return e
		})
		w := weir.WindowBy(weir.KeyBy(s, func(e event) int64 { return e.Key }), weir.Tumbling(500*time.Millisecond))
		counts := weir.Map(weir.AggregateWindow(w, countAgg{}, weir.Name("count")), func(c windowCount) windowCount {
			if c.Window.End == 5_000 && c.Key%2 == 0 && windowFailed.CompareAndSwap(false, true) {
				close(windowDown)
				panic(errors.New("a window subtask fails once"))
			}
			return c
		})
		weir.To(counts, "sink", sink)
	}
	windowFailed.Store(true)
	sourceFailed.Store(true) // the reference run does not fail
	ref := referenceRun(t, job)
	windowFailed.Store(false)
	sourceFailed.Store(false)
	sourceOpens.Store(0)
	windowDown = make(chan struct{})

	got := weirtest.NewSink[windowCount]()
	sink := countingSink[windowCount]{got, mu, map[int]int{}}
	logs := &logLines{}
	p := fineGrainedRun(t, job, sink, 20*time.Millisecond, weir.WithLog(logs.add))
	rep := p.Report()
	if len(rep.Recoveries) != 2 || !windowFailed.Load() || !sourceFailed.Load() {
		t.Fatalf("recoveries %+v, want the two failures", rep.Recoveries)
	}
	for _, rec := range rep.Recoveries {
		if rec.Restarted != 1 || rec.Subtasks != 4 {
			t.Fatalf("recovery %+v: want 1 of 4 subtasks restarted", rec)
		}
	}
	if n := sourceOpens.Load(); n != 3 {
		t.Fatalf("the source was opened %d times, want 3 (two subtasks, and the failed one again)", n)
	}
	mu.Lock()
	opens := sink.opens
	mu.Unlock()
	if opens[0]+opens[1] != 3 || min(opens[0], opens[1]) != 1 {
		t.Fatalf("sink writers opened per subtask: %v; want one window subtask restarted once and the other never", opens)
	}
	if err := weirtest.Equal(ref, got.Visible()); err != nil {
		t.Fatal(err)
	}
	var restarts int64
	for _, tm := range p.Metrics() {
		for _, sm := range tm.Subtasks {
			restarts += sm.Restarts
		}
	}
	if restarts != 2 {
		t.Fatalf("metrics count %d subtask restarts, want 2", restarts)
	}
	if all := logs.String(); !strings.Contains(all, "the others run on") {
		t.Fatalf("no log line about a fine-grained restart:\n%s", all)
	}
}

// When a sender's retained output outgrows its bound, it drops it and
// says so; a consumer that fails then cannot be replayed to, and the job
// falls back to a global rollback, still exactly once.
func TestUpstreamBackupBoundFallsBackToGlobalRollback(t *testing.T) {
	var failed atomic.Bool
	job := func(p *weir.Pipeline, sink connector.Sink[windowCount]) {
		w := weir.WindowBy(weir.KeyBy(events(p, "events", 20_000, 5), func(e event) int64 { return e.Key }), weir.Tumbling(500*time.Millisecond))
		counts := weir.Map(weir.AggregateWindow(w, countAgg{}), func(c windowCount) windowCount {
			if c.Window.End == 10_000 && failed.CompareAndSwap(false, true) {
				panic(errors.New("a window subtask fails once"))
			}
			return c
		})
		weir.To(counts, "sink", sink)
	}
	failed.Store(true)
	ref := referenceRun(t, job)
	failed.Store(false)

	got := weirtest.NewSink[windowCount]()
	logs := &logLines{}
	p := fineGrainedRun(t, job, got, 20*time.Millisecond,
		weir.WithRetainLimit(1), // every batch outgrows it
		weir.WithLog(logs.add))
	if err := weirtest.Equal(ref, got.Visible()); err != nil {
		t.Fatal(err)
	}
	rep := p.Report()
	all := logs.String()
	if !failed.Load() || len(rep.Recoveries) != 2 {
		t.Fatalf("recoveries %+v, want the fine-grained attempt and the global fallback", rep.Recoveries)
	}
	if last := rep.Recoveries[1]; last.Restarted != last.Subtasks || !strings.Contains(last.Cause, "upstream backup lost") {
		t.Fatalf("second recovery %+v: want a global rollback for the lost backup", last)
	}
	for _, want := range []string{"exceeded 1 bytes and was dropped", "falling back to a global rollback"} {
		if !strings.Contains(all, want) {
			t.Fatalf("the log does not say %q:\n%s", want, all)
		}
	}
}

// A map that merges two input channels fails. Its runtime logged the
// order in which it consumed them, so it restarts alone and repeats that
// order: its regenerated output carries the same sequence numbers, and
// the window subtasks downstream drop what they already have instead of
// restarting. The output is exactly the failure-free one.
//
// The windows hold regenerated records only if the map had shipped some
// after the checkpoint it restarts from, which depends on when the
// checkpoints fall; a run in which they dropped none proves nothing about
// the order, so the test runs again (at most five times) until one did.
func TestUpstreamBackupRepeatsTheLoggedConsumptionOrder(t *testing.T) {
	for try := 1; ; try++ {
		dups := repeatLoggedConsumptionOrder(t)
		if dups > 0 {
			t.Logf("run %d: the windows dropped %d records the restarted map regenerated", try, dups)
			return
		}
		if try == 5 {
			t.Fatal("in 5 runs the windows never dropped a record the restarted map regenerated: the logged order was never put to the test")
		}
		t.Logf("run %d: the windows held none of the restarted map's regenerated output; running again", try)
	}
}

// repeatLoggedConsumptionOrder runs the job of
// TestUpstreamBackupRepeatsTheLoggedConsumptionOrder once, checks it, and
// returns how many regenerated records the windows dropped.
func repeatLoggedConsumptionOrder(t *testing.T) int64 {
	t.Helper()
	var failed atomic.Bool
	mu := &sync.Mutex{}
	fail := func(e event) event {
		if e.Time == 70_000 && failed.CompareAndSwap(false, true) {
			panic(errors.New("the merging map fails once"))
		}
		return e
	}
	job := func(p *weir.Pipeline, sink connector.Sink[windowCount]) { rebalancedWith(p, sink, 100_000, fail) }
	failed.Store(true)
	ref := referenceRun(t, job)
	failed.Store(false)

	got := weirtest.NewSink[windowCount]()
	sink := countingSink[windowCount]{got, mu, map[int]int{}}
	// Checkpoints far apart leave the windows holding much of the map's
	// output since the latest one, which the restarted map regenerates.
	p := fineGrainedRun(t, job, sink, 400*time.Millisecond)
	rep := p.Report()
	if len(rep.Recoveries) != 1 || !failed.Load() {
		t.Fatalf("recoveries %+v, want the one failure", rep.Recoveries)
	}
	if rec := rep.Recoveries[0]; rec.Restarted != 1 || !strings.Contains(rec.Cause, "merging map") {
		t.Fatalf("recovery %+v: want the map subtask restarted alone", rec)
	}
	mu.Lock()
	opens := sink.opens
	mu.Unlock()
	if opens[0] != 1 || opens[1] != 1 {
		t.Fatalf("sink writers opened per subtask: %v; the windows downstream must not restart", opens)
	}
	if err := weirtest.Equal(ref, got.Visible()); err != nil {
		t.Fatal(err)
	}
	var dups int64
	for _, tm := range p.Metrics() {
		if strings.Contains(tm.Name, "count") {
			for _, sm := range tm.Subtasks {
				dups += sm.Duplicates
			}
		}
	}
	return dups
}

// A window subtask with a stage downstream fails halfway through firing
// a window of thousands of keys, part of which it had shipped. Under
// fine-grained failover its windows fire keys in hash order, not map
// order, so it regenerates its output record for record: it restarts
// alone, and the second stage drops the part it already has instead of
// restarting. (In map order the second stage would drop the wrong
// records; this test failed that way before the order was fixed.)
func TestUpstreamBackupRestartsAWindowAloneWithItsOutputRegenerated(t *testing.T) {
	checkRestartAloneRegenerates(t, weir.Tumbling(40*time.Second), func(i int64) int64 { return i }, 80_000)
}

// The same for session windows: 40,000 events share each timestamp, so
// some 33,000 sessions end at the same time and their timers tie; under
// fine-grained failover they fire in key-hash order, not the timer heap's.
func TestUpstreamBackupRestartsASessionWindowAloneWithItsOutputRegenerated(t *testing.T) {
	checkRestartAloneRegenerates(t, weir.Session(2*time.Second), func(i int64) int64 { return i / 40_000 * 10_000 }, 12_000)
}

// checkRestartAloneRegenerates runs 200,000 events of 100,000 keys, with
// event times timeOf, through windows of a, counts per key, and counts
// those counts again per key mod 7 in a second stage. Subtask 0 of the
// first stage, which owns key groups 0 to 63 and fires about 16,500 keys
// of the window ending at failEnd (some 3,000 per shipped buffer and
// channel), fails at the 12,000th. It must restart alone and regenerate
// its output exactly: the second stage drops what it already has, and
// the output equals the failure-free one.
func checkRestartAloneRegenerates(t *testing.T, a weir.WindowAssigner, timeOf func(int64) int64, failEnd int64) {
	t.Helper()
	var fired atomic.Int64
	mu := &sync.Mutex{}
	job := func(p *weir.Pipeline, sink connector.Sink[windowCount]) {
		src := generator.New(200_000, func(i int64) event {
			return event{Key: int64(generator.Mix(11, uint64(i)) % 100_000), Time: timeOf(i)}
		}, generator.WithRate(100_000))
		s := weir.FromSource(p, "events", src, weir.WithTimestamps(func(e event) int64 { return e.Time }, 0))
		w := weir.WindowBy(weir.KeyBy(s, func(e event) int64 { return e.Key }), a)
		counts := weir.Map(weir.AggregateWindow(w, countAgg{}, weir.Name("count")), func(c windowCount) windowCount {
			if c.Window.End == failEnd && weir.KeyGroupOf(c.Key, 128) < 64 && fired.Add(1) == 12_000 {
				panic(errors.New("a first-stage window subtask fails while firing"))
			}
			return c
		})
		asEvents := weir.Map(counts, func(c windowCount) event { return event{Key: c.Key % 7, Time: c.Window.End - 1} })
		w2 := weir.WindowBy(weir.KeyBy(asEvents, func(e event) int64 { return e.Key }), weir.Tumbling(40*time.Second))
		weir.To(weir.AggregateWindow(w2, countAgg{}, weir.Name("second")), "sink", sink)
	}
	fired.Store(-1 << 40) // the reference run does not fail
	ref := referenceRun(t, job)
	fired.Store(0)

	got := weirtest.NewSink[windowCount]()
	sink := countingSink[windowCount]{got, mu, map[int]int{}}
	p := fineGrainedRun(t, job, sink, 200*time.Millisecond)
	rep := p.Report()
	if len(rep.Recoveries) != 1 || fired.Load() < 12_000 {
		t.Fatalf("recoveries %+v, want the one failure", rep.Recoveries)
	}
	if rec := rep.Recoveries[0]; rec.Restarted != 1 {
		t.Fatalf("recovery %+v: want the window subtask restarted alone", rec)
	}
	mu.Lock()
	opens := sink.opens
	mu.Unlock()
	if opens[0] != 1 || opens[1] != 1 {
		t.Fatalf("sink writers opened per subtask: %v; the second stage must not restart", opens)
	}
	if err := weirtest.Equal(ref, got.Visible()); err != nil {
		t.Fatal(err)
	}
	var dups int64
	for _, tm := range p.Metrics() {
		if strings.Contains(tm.Name, "second") {
			for _, sm := range tm.Subtasks {
				dups += sm.Duplicates
			}
		}
	}
	if dups == 0 {
		t.Fatal("the second stage dropped no regenerated records: the failure came before any of the window's output was shipped")
	}
	t.Logf("the second stage dropped %d records the restarted window regenerated", dups)
}

// logLines collects a job's log lines, from any goroutine.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) add(s string) {
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
