package weirtest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weir-stream/weir"
)

// CheckLiveRescales is the oracle for live rescaling under exactly-once:
// it runs job failure-free once for the reference, then per seed runs it
// with failures injected and, once some of its output is committed,
// changes the parallelism of running tasks step by step while it runs
// (Pipeline.Rescale with steps[k], asking again when an injected failure
// ended the attempt first), and lets it run to its end. The output must
// be the reference's, each record once. Result.Rescaled counts the
// rescales that happened live, so the caller can assert that they did.
func CheckLiveRescales[T comparable](t testing.TB, job Job[T], o Options[T], steps []map[string]int) Result {
	t.Helper()
	o = o.withDefaults()
	o.Checkpoints.CheckConsistency = true
	want := reference(t, job, o)
	var res Result
	for _, seed := range o.Seeds {
		got := NewSink[T]()
		var log jobLog
		opts := append(append([]weir.Option{weir.WithParallelism(o.Parallelism), log.option()}, o.Options...), o.backend()...)
		opts = append(opts, weir.WithName(fmt.Sprintf("seed-%d", seed)), weir.WithGuarantee(weir.ExactlyOnce),
			weir.WithCheckpoints(o.Checkpoints), weir.WithInjectedFailures(o.Failures, seed),
			weir.WithRestartStrategy("fixed-delay", 100, time.Millisecond, 0, 0))
		w := NewWatchdog(o.StallBound)
		p := weir.NewPipeline(append(opts, w.Option())...)
		job(p, got)
		ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx, p, o.Timeout) }()
		for k, step := range steps {
			// Each step once more of the output is committed.
			at := (k + 1) * len(want) / (2 * len(steps))
			if err := rescaleWhenGrown(ctx, p, got, at, step, done); err != nil {
				cancel()
				t.Fatalf("seed %d, rescale %d (%v): %v\n%s", seed, k+1, step, err, log.tail())
			}
		}
		err := <-done
		cancel()
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, log.tail())
		}
		rep := p.Report()
		res.add(rep)
		for _, r := range rep.Rescales {
			if r.Live {
				res.Rescaled++
			}
		}
		if err := Equal(want, got.Visible()); err != nil {
			t.Fatalf("seed %d (rescales %+v, recoveries %+v): %v\n%s", seed, rep.Rescales, rep.Recoveries, err, log.tail())
		}
	}
	return res
}

// rescaleWhenGrown waits until sink holds more than n committed records
// and asks p to rescale as step says, again while an injected failure
// keeps the rescale from happening.
func rescaleWhenGrown[T comparable](ctx context.Context, p *weir.Pipeline, sink *Sink[T], n int, step map[string]int, done chan error) error {
	select {
	case <-sink.Grew(n):
	case err := <-done:
		done <- err
		return fmt.Errorf("the job ended before more than %d records were committed (%v): give it more input", n, err)
	}
	for {
		_, err := p.Rescale(ctx, step)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, weir.ErrNotLive), errors.Is(err, weir.ErrNotRunning), ctx.Err() != nil:
			return err
		}
		// The attempt failed or the checkpoint aborted: ask again, as a
		// user would.
	}
}
