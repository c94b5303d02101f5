package weirtest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-stream/weir"
)

// CheckSavepoints is the oracle for savepoints under exactly-once: it runs
// job failure-free once for the reference, then per seed runs it with
// failures injected, stops it with a savepoint once some of its output
// is committed, and restores the savepoint at the next parallelism of
// restoreAt (with failures injected again) to the end. The two runs'
// output together must be the reference's, each record once. It returns
// totals over the runs so the caller can assert that failures, stops and
// restores happened (Result.Stopped).
func CheckSavepoints[T comparable](t testing.TB, job Job[T], o Options[T], restoreAt []int) Result {
	t.Helper()
	return checkRestores(t, job, o, restoreAt, stopped)
}

// CheckCrashRestores is CheckSavepoints with a crash in place of the
// stop: per seed the run with failures injected is cancelled (its
// process state lost, as by SIGKILL) once more of its output than a
// seed-chosen share of the reference is committed, and a new run
// restores its latest checkpoint from the state directory, at the next
// parallelism of restoreAt, with failures injected again.
func CheckCrashRestores[T comparable](t testing.TB, job Job[T], o Options[T], restoreAt []int) Result {
	t.Helper()
	return checkRestores(t, job, o, restoreAt, crashed)
}

// CheckSavepointThenCrash is CheckCrashRestores with a savepoint taken
// before the crash while the job goes on (at its first commit), and the
// crash after a checkpoint that followed the savepoint completed: the
// restore reads that checkpoint, which must hold what the job did before
// the savepoint as well as after it.
func CheckSavepointThenCrash[T comparable](t testing.TB, job Job[T], o Options[T], restoreAt []int) Result {
	t.Helper()
	return checkRestores(t, job, o, restoreAt, savepointThenCrash)
}

// How checkRestores ends the first run of a seed.
const (
	stopped = iota
	crashed
	savepointThenCrash
)

func checkRestores[T comparable](t testing.TB, job Job[T], o Options[T], restoreAt []int, how int) Result {
	t.Helper()
	o = o.withDefaults()
	want := reference(t, job, o)
	var res Result
	for i, seed := range o.Seeds {
		got := NewSink[T]()
		dir := t.TempDir()
		common := append(o.backend(), weir.WithGuarantee(weir.ExactlyOnce),
			weir.WithRestartStrategy("fixed-delay", 100, time.Millisecond, 0, 0))
		var log jobLog
		ck := o.Checkpoints
		ck.StateDir = filepath.Join(dir, "state")
		first := o
		first.Options = append(append(append([]weir.Option(nil), o.Options...), common...), log.option(),
			weir.WithName(fmt.Sprintf("seed-%d", seed)), weir.WithCheckpoints(ck), weir.WithInjectedFailures(o.Failures, seed))
		var sp string
		var rep *weir.Report
		var err error
		switch how {
		case stopped:
			sp, rep, err = stopWithSavepoint(job, got, first, filepath.Join(dir, "savepoints"))
		default:
			sp = "latest"
			spDir := ""
			if how == savepointThenCrash {
				spDir = filepath.Join(dir, "savepoints")
			}
			rep, err = crashAfter(job, got, first, int(seed*7919%uint64(max(len(want)/2, 1))), spDir)
		}
		if err != nil {
			t.Fatalf("seed %d, the run stopped (how %d): %v\n%s", seed, how, err, log.tail())
		}
		res.add(rep)
		res.Stopped++

		second := o
		second.Parallelism = restoreAt[i%len(restoreAt)]
		second.Options = append(append(append([]weir.Option(nil), o.Options...), common...), log.option(),
			weir.WithName(fmt.Sprintf("seed-%d", seed)), weir.WithCheckpoints(ck),
			weir.WithInjectedFailures(o.Failures, seed+1000), weir.WithRestore(sp))
		rep, err = run(job, got, second)
		if err != nil {
			t.Fatalf("seed %d, the run restored from %s at parallelism %d: %v\n%s", seed, sp, second.Parallelism, err, log.tail())
		}
		if rep.Restored == 0 {
			t.Fatalf("seed %d: the run from %s restored nothing", seed, sp)
		}
		res.add(rep)
		if err := Equal(want, got.Visible()); err != nil {
			t.Fatalf("seed %d (stopped, restored from %s at parallelism %d; recoveries %+v): %v\n%s", seed, sp, second.Parallelism, rep.Recoveries, err, log.tail())
		}
	}
	return res
}

// stopWithSavepoint runs job into sink as o says until some of its
// output is committed, then stops it with a savepoint into dir (asking
// again when a failure aborted the savepoint's checkpoint) and returns
// the savepoint's path.
func stopWithSavepoint[T comparable](job Job[T], sink *Sink[T], o Options[T], dir string) (string, *weir.Report, error) {
	w := NewWatchdog(o.StallBound)
	p := weir.NewPipeline(append(append([]weir.Option{weir.WithParallelism(o.Parallelism)}, o.Options...), w.Option())...)
	job(p, sink)
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, p, o.Timeout) }()
	select {
	case <-sink.Grew(0):
	case err := <-done:
		return "", p.Report(), fmt.Errorf("the job ended before its first output was committed (%v): give it more input", err)
	}
	for {
		sp, err := p.StopWithSavepoint(ctx, dir)
		if err == nil {
			if err := <-done; err != nil {
				return "", p.Report(), fmt.Errorf("stopped with savepoint %s, the run returned %w", sp.Path, err)
			}
			if !p.Report().Stopped {
				return "", p.Report(), fmt.Errorf("savepoint %s written, but the run did not stop after it", sp.Path)
			}
			return sp.Path, p.Report(), nil
		}
		if errors.Is(err, weir.ErrNotRunning) || ctx.Err() != nil {
			cancel()
			<-done
			return "", p.Report(), fmt.Errorf("no savepoint before the job ended: %w", err)
		}
		// The savepoint's checkpoint was aborted (a failure was injected
		// meanwhile): ask again, as a user would.
	}
}

// crashAfter runs job into sink as o says until more than n of its
// records are visible, then cancels it, as a crash would end it. With
// spDir set it first takes a savepoint into spDir at the first commit
// (the job going on), and crashes only once records written after the
// savepoint's barrier are visible too: a checkpoint after the savepoint
// completed.
func crashAfter[T comparable](job Job[T], sink *Sink[T], o Options[T], n int, spDir string) (*weir.Report, error) {
	w := NewWatchdog(o.StallBound)
	p := weir.NewPipeline(append(append([]weir.Option{weir.WithParallelism(o.Parallelism)}, o.Options...), w.Option())...)
	job(p, sink)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, p, o.Timeout) }()
	ended := func(err error) (*weir.Report, error) {
		return p.Report(), fmt.Errorf("the job ended before more than %d records were committed (%v): give it more input", n, err)
	}
	if spDir != "" {
		select {
		case <-sink.Grew(0):
		case err := <-done:
			return ended(err)
		}
		var sp weir.Savepoint
		for {
			var err error
			if sp, err = p.Savepoint(ctx, spDir); err == nil {
				break
			}
			if errors.Is(err, weir.ErrNotRunning) {
				return ended(err)
			}
			// Aborted by an injected failure: ask again.
		}
		for !writtenAfter(sink, sp.Checkpoint) {
			select {
			case <-sink.Grew(len(sink.Visible())):
			case err := <-done:
				return ended(err)
			}
		}
	}
	select {
	case <-sink.Grew(n):
		cancel()
		<-done
		if p.Report().Completed == 0 {
			return p.Report(), fmt.Errorf("crashed before a checkpoint completed")
		}
		return p.Report(), nil
	case err := <-done:
		return ended(err)
	}
}

// writtenAfter reports whether a record written after checkpoint id's
// barrier is visible in sink.
func writtenAfter[T comparable](sink *Sink[T], id int64) bool {
	for _, w := range sink.Visible() {
		if w.Barrier > id {
			return true
		}
	}
	return false
}
