package jobs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
)

// TestLiveRescalePauseBenchmark measures the pause of a change of the
// stateful task's parallelism from 2 to 3 in one process, by state size:
// a live rescale (Pipeline.Rescale, what weir rescale --http asks for)
// against a stop with a savepoint and a run restored from it at
// parallelism 3 (weir stop --savepoint, then weir run --restore). It
// runs only when WEIR_BENCH_LIVE_RESCALE gives the runs per size
// (WEIR_BENCH_LIVE_RESCALE_MB the sizes, default "10 100");
// docs/benchmarks.md has its figures.
//
// The job is largestate (--value-bytes 100, keys = size / 100 bytes, the
// default in-memory state backend, exactly-once into files), throttled
// so that each of its two passes takes about 5 s (10 MB) or 10 s
// (100 MB), with checkpoints a minute apart so that only the change
// takes one; the change starts once the second pass writes rows, when
// all the state is there. Both ways are timed from the call to the
// first record the stateful task's new subtasks hand to the sink, the
// metrics polled every 2 ms; the live rescale's own Pause (its
// checkpoint's trigger to the new subtasks' restore) is logged beside.
// The restored run starts in this process: a new process's start-up is
// not counted. Runs alternate which way goes first.
func TestLiveRescalePauseBenchmark(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("WEIR_BENCH_LIVE_RESCALE"))
	if runs < 1 {
		t.Skip("a benchmark: set WEIR_BENCH_LIVE_RESCALE to the runs per size")
	}
	sizes := strings.Fields(os.Getenv("WEIR_BENCH_LIVE_RESCALE_MB"))
	if len(sizes) == 0 {
		sizes = []string{"10", "100"}
	}
	for _, mb := range sizes {
		n, err := strconv.Atoi(mb)
		if err != nil {
			t.Fatal(err)
		}
		var live, reported, manual, liveCk, manualCk []time.Duration
		var bytes int64
		for i := range runs {
			for _, viaLive := range []bool{i%2 == 0, i%2 != 0} {
				b := &pauseRun{t: t, dir: t.TempDir(), mb: n}
				if viaLive {
					p, rep, ck := b.live()
					live, reported, liveCk = append(live, p), append(reported, rep), append(liveCk, ck)
				} else {
					p, ck, size := b.manual()
					manual, manualCk, bytes = append(manual, p), append(manualCk, ck), size
				}
			}
		}
		t.Logf("%d MB of state (savepoint %.1f MB), %d runs, parallelism 2 -> 3, call to first record written by the new subtasks:", n, float64(bytes)/1e6, runs)
		t.Logf("  live rescale:                                   median %v, range %v", median(live), spread(live))
		t.Logf("    its Pause, trigger to restored:               median %v, range %v", median(reported), spread(reported))
		t.Logf("    its checkpoint, trigger to completed:         median %v, range %v", median(liveCk), spread(liveCk))
		t.Logf("  stop with savepoint + restore at parallelism 3: median %v, range %v", median(manual), spread(manual))
		t.Logf("    the savepoint's checkpoint:                   median %v, range %v", median(manualCk), spread(manualCk))
	}
}

// pauseRun is one run of the benchmark's job, in dir.
type pauseRun struct {
	t   *testing.T
	dir string
	mb  int
}

// running is a run of the benchmark's job: done receives Run's error.
type running struct {
	p      *weir.Pipeline
	done   chan error
	cancel context.CancelFunc
}

// stop cancels the run and waits for its end.
func (r running) stop() {
	r.cancel()
	<-r.done
}

// start runs largestate at parallelism p, restored from restore if not
// empty, and waits until its stateful task hands records to the sink.
func (b *pauseRun) start(p int, restore string) running {
	keys := int64(b.mb) * 10_000 // 100 bytes each
	rate := float64(keys) / 5
	if b.mb >= 100 {
		rate = float64(keys) / 10
	}
	opts := []weir.Option{weir.WithName("largestate"), weir.WithParallelism(p), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{StateDir: filepath.Join(b.dir, "state"), Interval: time.Minute})}
	if restore != "" {
		opts = append(opts, weir.WithRestore(restore))
	}
	pl := weir.NewPipeline(opts...)
	LargeStatePipeline(pl, keys, 100, 1, rate, cli.JobConfig{Output: filepath.Join(b.dir, "out")})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pl.Run(ctx) }()
	r := running{p: pl, done: done, cancel: cancel}
	if _, err := b.firstWrite(r, p); err != nil {
		r.stop()
		b.t.Fatal(err)
	}
	return r
}

// firstWrite polls r's metrics until its stateful task, at parallelism
// p, handed a record to the sink and returns when.
func (b *pauseRun) firstWrite(r running, p int) (time.Time, error) {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		for _, m := range r.p.Metrics() {
			if strings.HasPrefix(m.Name, "keep") && m.Parallelism == p && m.RecordsWritten > 0 {
				return time.Now(), nil
			}
		}
		select {
		case err := <-r.done:
			r.done <- err
			return time.Time{}, fmt.Errorf("the job ended before it wrote a record: %v", err)
		case <-time.After(2 * time.Millisecond):
		}
	}
	return time.Time{}, fmt.Errorf("the job wrote nothing in 5 minutes")
}

// live measures a live rescale of keep from 2 to 3; it returns the time
// to the first record written after it, the rescale's own Pause and
// the duration of its checkpoint.
func (b *pauseRun) live() (time.Duration, time.Duration, time.Duration) {
	run := b.start(2, "")
	defer run.stop()
	t0 := time.Now()
	type result struct {
		r   weir.LiveRescale
		err error
	}
	res := make(chan result, 1)
	go func() {
		r, err := run.p.Rescale(context.Background(), map[string]int{"keep": 3})
		res <- result{r, err}
	}()
	// The metrics show the new subtasks, whose counters start at zero,
	// from their start on, which may come before Rescale returns (once
	// the rescale's checkpoint completed).
	at, err := b.firstWrite(run, 3)
	if err != nil {
		b.t.Fatal(err)
	}
	r := <-res
	if r.err != nil {
		b.t.Fatal(r.err)
	}
	return at.Sub(t0), r.r.Pause, checkpointTook(run.p, r.r.Checkpoint)
}

// checkpointTook returns how long checkpoint id of p took, from its
// trigger to its completion.
func checkpointTook(p *weir.Pipeline, id int64) time.Duration {
	for _, c := range p.Report().Checkpoints {
		if c.ID == id {
			return c.Duration
		}
	}
	return 0
}

// manual measures a stop with a savepoint and a run restored from it at
// parallelism 3; it returns the time to the first record written after
// it, the duration of the savepoint's checkpoint and the savepoint's
// size.
func (b *pauseRun) manual() (time.Duration, time.Duration, int64) {
	run := b.start(2, "")
	t0 := time.Now()
	sp, err := run.p.StopWithSavepoint(context.Background(), filepath.Join(b.dir, "savepoints"))
	if err != nil {
		run.stop()
		b.t.Fatal(err)
	}
	if err := <-run.done; err != nil { // Run returns once the sinks committed the savepoint
		b.t.Fatalf("the stopped run: %v", err)
	}
	run.cancel()
	restored := b.start(3, sp.Path) // returns at its first record written
	took := time.Since(t0)
	restored.stop()
	return took, checkpointTook(run.p, sp.Checkpoint), sp.Bytes
}

func median(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	return s[len(s)/2].Round(time.Millisecond)
}

func spread(ds []time.Duration) string {
	return fmt.Sprintf("%v–%v", slices.Min(ds).Round(time.Millisecond), slices.Max(ds).Round(time.Millisecond))
}
