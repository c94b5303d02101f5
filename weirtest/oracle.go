// Package weirtest is the oracle harness: it runs a job without failures
// for the reference output, runs it again with failures injected at random
// moments and at named points of the checkpoint protocol, and compares the
// outputs as the job's guarantee promises:
//
//   - exactly-once: the same multiset of records;
//   - at-least-once: a superset, whose extra copies were all written by a
//     failed attempt after the last checkpoint it completed (the records a
//     rollback replays);
//   - at-most-once: no record more often than in the reference (for
//     aggregates, a job-specific check that no result exceeds the
//     failure-free one).
package weirtest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
)

// Job adds a job's operators to p, writing its output to sink.
type Job[T comparable] func(p *weir.Pipeline, sink connector.Sink[T])

// Options configure Check.
type Options[T comparable] struct {
	Guarantee   weir.Guarantee
	Parallelism int
	// Seeds name the failure schedules, one run each.
	Seeds []uint64
	// Failures is the number of failures injected per run (default 2).
	Failures int
	// Checkpoints tunes checkpoints (default: every 20ms).
	Checkpoints weir.CheckpointConfig
	// Options are added to every pipeline.
	Options []weir.Option
	// Compare, if set, replaces the default comparison for the guarantee
	// (for aggregates, whose values change rather than repeat).
	Compare func(ref []T, got []Written[T], rep *weir.Report) error
	// Timeout bounds each run (default DefaultRunTimeout): a backstop
	// for a run that goes on making progress and never ends. A run that
	// stops making progress fails sooner, after StallBound.
	Timeout time.Duration
	// StallBound fails a run that makes no progress this long, with what
	// each subtask waited on and every goroutine's stack (default
	// DefaultStallBound; see Watchdog).
	StallBound time.Duration
	// StateBackend, when named, is the state backend of every run but
	// the reference, which keeps state in memory: the outputs then also
	// compare the backends. Empty takes the WEIR_TEST_STATE_BACKEND
	// environment variable ("pebble" runs a test suite under the pebble
	// backend), and without it the memory backend, whose failure runs
	// then checkpoint all state incrementally.
	StateBackend weir.StateBackend
	// Transactional makes the failure runs' sink commit with checkpoints
	// even for at-least-once (exactly-once always uses it; at-least-once
	// and at-most-once use a plain sink by default, to expose duplicates).
	Transactional bool
}

// Result sums up the runs of Check.
type Result struct {
	Runs       int
	Injected   int
	Recoveries int
	Completed  int // checkpoints completed over all runs
	Stopped    int // runs stopped with a savepoint or crashed (CheckSavepoints, CheckCrashRestores)
	Rescaled   int // tasks rescaled live (CheckLiveRescales)
}

// Check runs job failure-free once and once per seed with failures, and
// fails t if an output breaks the guarantee. It returns totals so the
// caller can assert that failures did happen.
func Check[T comparable](t testing.TB, job Job[T], o Options[T]) Result {
	t.Helper()
	o = o.withDefaults()
	o.Checkpoints.CheckConsistency = o.Guarantee == weir.ExactlyOnce
	want := reference(t, job, o)
	var res Result
	for _, seed := range o.Seeds {
		got := NewSink[T]()
		if o.Guarantee != weir.ExactlyOnce && !o.Transactional {
			got = NewPlainSink[T]()
		}
		var log jobLog
		rep, err := runLogged(job, got, o, &log, append(o.backend(), weir.WithName(fmt.Sprintf("seed-%d", seed)), weir.WithGuarantee(o.Guarantee),
			weir.WithCheckpoints(o.Checkpoints), weir.WithInjectedFailures(o.Failures, seed),
			weir.WithRestartStrategy("fixed-delay", 100, time.Millisecond, 0, 0))...)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, log.tail())
		}
		res.add(rep)
		if err := compare(want, got.Visible(), rep, o); err != nil {
			t.Fatalf("seed %d (%s, %d failures injected, recoveries %+v): %v\n%s", seed, o.Guarantee, rep.Injected, rep.Recoveries, err, log.tail())
		}
	}
	return res
}

// withDefaults returns o with the defaults Options documents filled in.
func (o Options[T]) withDefaults() Options[T] {
	if o.Failures == 0 {
		o.Failures = 2
	}
	if o.Checkpoints.Interval == 0 {
		o.Checkpoints.Interval = 20 * time.Millisecond
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultRunTimeout
	}
	if o.Parallelism == 0 {
		o.Parallelism = 2
	}
	if o.StateBackend.Name == "" {
		o.StateBackend.Name = os.Getenv("WEIR_TEST_STATE_BACKEND")
	}
	return o
}

// backend returns the options that give a run o's state backend. The
// memory backend's failure runs checkpoint every table incrementally
// (IncrementalFrom -1), however small the test's state, so that the
// chains of files and their restores meet every failure; the reference
// writes whole snapshots, so the outputs compare the two.
func (o Options[T]) backend() []weir.Option {
	b := o.StateBackend
	if b.Name == "" || b.Name == "memory" {
		b.Name = "memory"
		if b.IncrementalFrom == 0 && !b.FullSnapshots {
			b.IncrementalFrom = -1
		}
	}
	return []weir.Option{weir.WithStateBackend(b)}
}

// reference runs job failure-free and returns its output.
func reference[T comparable](t testing.TB, job Job[T], o Options[T]) []T {
	t.Helper()
	ref := NewSink[T]()
	if _, err := run(job, ref, o, weir.WithName("reference")); err != nil {
		t.Fatalf("reference run: %v", err)
	}
	return ref.Values()
}

// add counts a run's report into r.
func (r *Result) add(rep *weir.Report) {
	r.Runs++
	r.Injected += rep.Injected
	r.Recoveries += len(rep.Recoveries)
	r.Completed += rep.Completed
}

func run[T comparable](job Job[T], sink *Sink[T], o Options[T], extra ...weir.Option) (*weir.Report, error) {
	return runLogged(job, sink, o, nil, extra...)
}

// runLogged is run; the job's log goes to log unless o.Options set one.
func runLogged[T comparable](job Job[T], sink *Sink[T], o Options[T], log *jobLog, extra ...weir.Option) (*weir.Report, error) {
	opts := []weir.Option{weir.WithParallelism(o.Parallelism)}
	if log != nil {
		opts = append(opts, log.option())
	}
	opts = append(opts, o.Options...)
	w := NewWatchdog(o.StallBound)
	p := weir.NewPipeline(append(append(opts, extra...), w.Option())...)
	job(p, sink)
	err := w.Run(context.Background(), p, o.Timeout)
	return p.Report(), err
}

func compare[T comparable](ref []T, got []Written[T], rep *weir.Report, o Options[T]) error {
	if o.Compare != nil {
		return o.Compare(ref, got, rep)
	}
	switch o.Guarantee {
	case weir.ExactlyOnce:
		return Equal(ref, got)
	case weir.AtLeastOnce:
		return RolledBack(ref, got, rep)
	case weir.AtMostOnce:
		return AtMost(ref, got)
	}
	return Equal(ref, got)
}

func counts[T comparable](vs []T) map[T]int {
	m := make(map[T]int, len(vs))
	for _, v := range vs {
		m[v]++
	}
	return m
}

func values[T comparable](ws []Written[T]) []T {
	out := make([]T, len(ws))
	for i, w := range ws {
		out[i] = w.Value
	}
	return out
}

// Equal checks that got holds exactly the records of ref.
func Equal[T comparable](ref []T, got []Written[T]) error {
	want, have := counts(ref), counts(values(got))
	var missing, extra int
	var example string
	for v, n := range want {
		if have[v] < n {
			missing += n - have[v]
			example = fmt.Sprintf("%v appears %d times, want %d", v, have[v], n)
		}
	}
	for v, n := range have {
		if n > want[v] {
			extra += n - want[v]
			if example == "" {
				example = fmt.Sprintf("%v appears %d times, want %d", v, n, want[v])
			}
		}
	}
	if missing+extra > 0 {
		return fmt.Errorf("output differs from the failure-free run: %d records missing, %d extra; e.g. %s", missing, extra, example)
	}
	return nil
}

// AtMost checks that no record appears more often than in ref.
func AtMost[T comparable](ref []T, got []Written[T]) error {
	want := counts(ref)
	for v, n := range counts(values(got)) {
		if n > want[v] {
			return fmt.Errorf("%v appears %d times, more than the %d of the failure-free run", v, n, want[v])
		}
	}
	return nil
}

// NothingLost checks at-least-once output without attributing its
// duplicates: every record of ref appears at least as often, and nothing
// appears that ref does not hold. It is the check for a job with an
// operator that keeps records of two or more inputs in state (a join):
// an at-least-once snapshot, taken without alignment, can hold records
// that arrived on one input after its barrier; a restore replays them
// into the state a second time, and the attempt that then runs without
// failing emits their matches twice, which RolledBack would call
// unexplained.
func NothingLost[T comparable](ref []T, got []Written[T]) error {
	want, have := counts(ref), counts(values(got))
	if err := lost(want, have); err != nil {
		return err
	}
	for v, n := range have {
		if want[v] == 0 {
			return fmt.Errorf("%v appears %d times, and not in the failure-free run", v, n)
		}
	}
	return nil
}

// lost fails if a record of want appears in have fewer times.
func lost[T comparable](want, have map[T]int) error {
	for v, n := range want {
		if have[v] < n {
			return fmt.Errorf("%v appears %d times, want at least %d: records were lost", v, have[v], n)
		}
	}
	return nil
}

// RolledBack checks rollback recovery: nothing of ref is missing, and each
// extra copy of a record was written by an attempt that then failed, after
// the last checkpoint that attempt completed: exactly the records a
// restore from that checkpoint replays.
func RolledBack[T comparable](ref []T, got []Written[T], rep *weir.Report) error {
	want, have := counts(ref), counts(values(got))
	if err := lost(want, have); err != nil {
		return err
	}
	failed := len(rep.Recoveries) // attempts 0..failed-1 failed
	legit := map[T]int{}
	for _, w := range got {
		if w.Attempt >= failed {
			continue
		}
		last := rep.Recoveries[w.Attempt].LastCompleted
		barrier := w.Barrier
		if barrier < 0 { // no barrier yet in this attempt: it started from its restore
			barrier = rep.Restored
			if w.Attempt > 0 {
				barrier = rep.Recoveries[w.Attempt-1].Restored
			}
		}
		if barrier >= last {
			legit[w.Value]++
		}
	}
	for v, n := range have {
		if extra := n - want[v]; extra > legit[v] {
			return fmt.Errorf("%v appears %d times, %d more than the failure-free run, but only %d copies were written after a failed attempt's last completed checkpoint", v, n, extra, legit[v])
		}
	}
	return nil
}

// StateBackendFromEnv returns the options that give a run the state
// backend WEIR_TEST_STATE_BACKEND names, or the memory backend with all
// state checkpointed incrementally when it names none: for tests outside
// this package that run failure runs beside a reference.
func StateBackendFromEnv() []weir.Option {
	return Options[int]{}.withDefaults().backend()
}
