package weir_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/internal/state/lsm"
)

// churnRounds is how many checkpoint intervals change 1% of the keys.
const churnRounds = 5

// BenchmarkIncrementalCheckpoints fills WEIR_STATE_MB megabytes (default
// 100) of keyed value state (100-byte values) at parallelism 2 under each
// state backend, then for churnRounds checkpoint intervals rewrites 1% of
// the keys (chosen at random) and waits for a checkpoint taken after the
// rewrite. It reports the median churn checkpoint's duration and
// synchronous pause, the bytes each churn interval wrote to the state
// directory (memory: the checkpoint's size; pebble: the table files
// uploaded, from the Env's counter) and their share of the state, the
// process's peak RSS so far, and then the time to restore the last
// checkpoint until every subtask's function opened: in the same process
// (pebble: from the local copies) and, for pebble, with a fresh Env that
// has no local copies, so that every file is downloaded.
func BenchmarkIncrementalCheckpoints(b *testing.B) {
	mb, keys := stateSize()
	for _, backend := range []string{"memory", "pebble"} {
		b.Run(fmt.Sprintf("%s/%dMB", backend, mb), func(b *testing.B) {
			for range b.N {
				churnCheckpoints(b, backend, keys)
			}
		})
	}
}

func churnCheckpoints(b *testing.B, backend string, keys int64) {
	stateDir := filepath.Join(b.TempDir(), "state")
	// A local directory that outlives the run, as a worker's does: the
	// restore after it finds the local copies there.
	sb := weir.WithStateBackend(weir.StateBackend{Name: backend, Dir: b.TempDir()})
	src := &churnSource{limit: keys, par: 2, signal: make(chan struct{}, 2)}
	p := weir.NewPipeline(weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce), sb,
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 2 * time.Second, StateDir: stateDir}))
	churnJob(p, src)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	wait := func() { // for both readers to finish their share
		for range 2 {
			select {
			case <-src.signal:
			case err := <-done:
				b.Fatalf("run ended: %v", err)
			}
		}
	}
	wait()
	filled := time.Now()
	base := checkpointAfter(b, p, filled, done)
	uploaded := uploadedBytes()
	b.ReportMetric(time.Since(filled).Seconds(), "fill-to-base-s")
	var durs, syncs, written []float64
	for r := 1; r <= churnRounds; r++ {
		src.round.Store(int64(r))
		wait()
		c := checkpointAfter(b, p, time.Now(), done)
		durs = append(durs, c.Duration.Seconds())
		syncs = append(syncs, c.Sync.Seconds())
		if backend == "pebble" {
			u := uploadedBytes()
			written = append(written, float64(u-uploaded))
			uploaded = u
		} else {
			written = append(written, float64(c.Size))
		}
	}
	state := float64(keys * 100)
	b.ReportMetric(base.Duration.Seconds(), "base-checkpoint-s")
	b.ReportMetric(median(durs), "churn-checkpoint-s")
	b.ReportMetric(median(syncs), "churn-sync-s")
	b.ReportMetric(median(written)/(1<<20), "churn-written-MiB")
	b.ReportMetric(100*median(written)/state, "churn-written-%state")
	b.ReportMetric(100*mean(written)/state, "churn-written-mean-%state")
	b.ReportMetric(slices.Max(written)/(1<<20), "churn-written-max-MiB")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MiB")
	if e := lsm.CurrentEnv(); e != nil {
		b.ReportMetric(float64(e.Metrics().DiskBytes)/(1<<20), "disk-MiB")
	}
	cancel()
	<-done

	before := lsmMetrics()
	b.ReportMetric(restoreLatest(b, stateDir, sb, keys).Seconds(), "restore-local-s")
	after := lsmMetrics()
	b.ReportMetric(float64(after.Linked-before.Linked)/(1<<20), "restore-local-linked-MiB")
	b.ReportMetric(float64(after.Downloaded-before.Downloaded)/(1<<20), "restore-local-downloaded-MiB")
	if backend == "pebble" {
		// Another local directory: nothing is local, as on another worker.
		fresh := weir.WithStateBackend(weir.StateBackend{Name: backend, Dir: b.TempDir()})
		before := lsmMetrics()
		b.ReportMetric(restoreLatest(b, stateDir, fresh, keys).Seconds(), "restore-remote-s")
		m := lsmMetrics()
		b.ReportMetric(float64(m.Linked-before.Linked)/(1<<20), "restore-remote-linked-MiB")
		b.ReportMetric(float64(m.Downloaded-before.Downloaded)/(1<<20), "restore-remote-downloaded-MiB")
	}
	b.ReportMetric(0, "ns/op")
}

// checkpointAfter waits for the first checkpoint triggered after t to
// complete and returns it.
func checkpointAfter(b *testing.B, p *weir.Pipeline, t time.Time, done <-chan error) weir.CheckpointStats {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if r := p.Report(); r != nil {
			for _, c := range r.Checkpoints {
				if c.Status == "completed" && c.Triggered.After(t) {
					return c
				}
			}
		}
		select {
		case <-tick.C:
		case err := <-done:
			b.Fatalf("run ended: %v", err)
		}
	}
}

// restoreLatest restores the latest checkpoint of stateDir at
// parallelism 2 and returns the time until both subtasks opened.
func restoreLatest(b *testing.B, stateDir string, sb weir.Option, keys int64) time.Duration {
	src := &churnSource{limit: keys, par: 2, signal: make(chan struct{}, 2)}
	p := weir.NewPipeline(weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce), sb, weir.WithRestore("latest"),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: time.Hour, StateDir: stateDir}))
	var all <-chan struct{}
	src.opened, all = countTo(2)
	churnJob(p, src)
	return runUntil(b, p, all)
}

// churnJob keeps a 100-byte value per key read from src, as fillJob.
func churnJob(p *weir.Pipeline, src *churnSource) {
	perKeyJob(p, src, func() weir.KeyedProcessFunction[int64, int64, int64] { return &randomFiller{opened: src.opened} })
}

// randomFiller keeps a 90-byte value per key (about 100 bytes with the
// key, as filler) that differs with every update and does not compress:
// an LSM store compresses its blocks, and filler's zeros would shrink to
// almost nothing on disk. opened, if set, is called when it opens.
type randomFiller struct {
	v      *weir.ValueState[string, int64]
	opened func()
	n      uint64
	buf    [96]byte
}

func (f *randomFiller) Open(sc *weir.StateContext[int64]) error {
	f.v = weir.NewValueState[string](sc, "v")
	if f.opened != nil {
		f.opened()
	}
	return nil
}

func (f *randomFiller) ProcessElement(_ *weir.KeyedContext[int64, int64], k int64) error {
	f.n++
	for i := 0; i < len(f.buf); i += 8 {
		binary.LittleEndian.PutUint64(f.buf[i:], generator.Mix(f.n, uint64(k)+uint64(i)))
	}
	f.v.Update(string(f.buf[:90]))
	return nil
}

// churnSource emits 0 .. limit-1, strided over its subtasks, and then,
// each time round grows, limit/100 keys chosen at random for that round;
// each reader sends on signal once it emitted its share of the fill and
// of each round. A restored reader only idles.
type churnSource struct {
	limit  int64
	par    int
	round  atomic.Int64
	signal chan struct{}
	opened func() // if set, called as each filler opens
}

func (s *churnSource) Open(_ context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[int64], error) {
	r := &churnReader{s: s, sub: int64(info.Subtask), next: int64(info.Subtask), step: int64(info.Parallelism)}
	if pos != nil {
		r.next, r.restored = s.limit, true
	}
	return r, nil
}

type churnReader struct {
	s          *churnSource
	sub        int64
	next, step int64
	round      int64 // the last round emitted (0: the fill)
	j          int64 // the next index of the round being emitted (0: not started)
	restored   bool
	filled     bool
}

func (r *churnReader) Read(ctx context.Context, buf []int64) (int, error) {
	n := 0
	for n < len(buf) && r.next < r.s.limit {
		buf[n] = r.next
		r.next += r.step
		n++
	}
	if n > 0 || r.restored {
		return n, idle(ctx, n)
	}
	if !r.filled {
		r.filled = true
		r.s.signal <- struct{}{}
	}
	if r.round < r.s.round.Load() {
		round, perRound := r.round+1, r.s.limit/100
		if r.j == 0 {
			r.j = r.sub
		}
		for n < len(buf) && r.j < perRound {
			buf[n] = int64(generator.Mix(uint64(round), uint64(r.j)) % uint64(r.s.limit))
			r.j += r.step
			n++
		}
		if r.j >= perRound {
			r.round, r.j = round, 0
			r.s.signal <- struct{}{}
		}
		return n, nil
	}
	return 0, idle(ctx, 0)
}

// idle waits a little when nothing was read.
func idle(ctx context.Context, n int) error {
	if n > 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(5 * time.Millisecond):
		return nil
	}
}

// Position keeps only that the reader is past the fill: a restore idles.
func (r *churnReader) Position() connector.Position {
	return connector.Position(strconv.FormatInt(r.next, 10))
}

func (r *churnReader) Close() error { return nil }

func uploadedBytes() int64 { return lsmMetrics().Uploaded }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// peakRSS returns the process's peak resident set, in bytes.
func peakRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Maxrss << 10
}
