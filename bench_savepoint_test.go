package weir_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
)

// BenchmarkSavepoint fills keyed value state with WEIR_STATE_MB megabytes
// (default 100) of 100-byte values at parallelism 2, takes a savepoint of
// it and compares it with the checkpoint it copies (duration and size),
// then restores the savepoint at parallelism 2 (the same), 1 and 4 and
// reports how long each restore took until every subtask's function was
// open (its state restored).
func BenchmarkSavepoint(b *testing.B) {
	mb, keys := stateSize()
	b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
		for range b.N {
			dir := b.TempDir()
			src := &fillSource{limit: keys, par: 2, ready: make(chan struct{})}
			p := weir.NewPipeline(weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce),
				weir.WithCheckpoints(weir.CheckpointConfig{Interval: time.Hour, StateDir: filepath.Join(dir, "state")}))
			fillJob(p, src, nil)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- p.Run(ctx) }()
			<-src.ready
			sp, err := p.Savepoint(ctx, filepath.Join(dir, "savepoints"))
			if err != nil {
				b.Fatal(err)
			}
			cancel()
			<-done
			for _, c := range p.Report().Checkpoints {
				if c.ID == sp.Checkpoint {
					b.ReportMetric(c.Duration.Seconds(), "checkpoint-s")
					b.ReportMetric(float64(c.Size)/(1<<20), "checkpoint-MiB")
				}
			}
			b.ReportMetric(sp.Duration.Seconds(), "savepoint-s")
			b.ReportMetric(float64(sp.Bytes)/(1<<20), "savepoint-MiB")
			for _, par := range []int{2, 1, 4} {
				b.ReportMetric(restoreTime(b, sp.Path, par, keys).Seconds(), fmt.Sprintf("restore-p%d-s", par))
			}
			b.ReportMetric(0, "ns/op")
		}
	})
}

// restoreTime restores savepoint path at parallelism par and returns the
// time from the start of the run until every subtask of the filler
// opened.
func restoreTime(b *testing.B, path string, par int, keys int64) time.Duration {
	src := &fillSource{limit: keys, par: par, ready: make(chan struct{})}
	p := weir.NewPipeline(weir.WithParallelism(par), weir.WithGuarantee(weir.ExactlyOnce), weir.WithRestore(path),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: time.Hour}))
	opened, all := countTo(par)
	fillJob(p, src, opened)
	return runUntil(b, p, all)
}

// countTo returns a function that closes the channel it returns when it
// was called n times.
func countTo(n int) (func(), <-chan struct{}) {
	var calls atomic.Int32
	all := make(chan struct{})
	return func() {
		if calls.Add(1) == int32(n) {
			close(all)
		}
	}, all
}

// runUntil runs p until until closes, then cancels it, and returns the
// time from its start until until closed. The run ending first fails b.
func runUntil(b *testing.B, p *weir.Pipeline, until <-chan struct{}) time.Duration {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- p.Run(ctx) }()
	select {
	case <-until:
	case err := <-done:
		cancel()
		b.Fatalf("the run ended: %v", err)
	}
	d := time.Since(start)
	cancel()
	<-done
	return d
}

// fillJob keeps a 100-byte value per key read from src; opened, if set,
// is called as each subtask's function opens.
func fillJob(p *weir.Pipeline, src *fillSource, opened func()) {
	perKeyJob(p, src, func() weir.KeyedProcessFunction[int64, int64, int64] { return &filler{opened: opened} })
}

// perKeyJob keys the numbers src reads by themselves and runs the
// function fn makes on them, discarding what it emits: the state
// benchmarks' job.
func perKeyJob(p *weir.Pipeline, src connector.Source[int64], fn func() weir.KeyedProcessFunction[int64, int64, int64]) {
	in := weir.FromSource(p, "keys", src, weir.SourceUID("keys"))
	filled := weir.Process(weir.KeyBy(in, func(v int64) int64 { return v }), fn, weir.UID("filler"))
	weir.To(filled, "discard", exactlyOnceDiscard[int64]{})
}

// fillSource emits 0 .. limit-1, strided over its subtasks, then idles;
// ready closes once every subtask read all of its share.
type fillSource struct {
	limit int64
	par   int
	mu    sync.Mutex
	done  int
	ready chan struct{}
}

func (s *fillSource) Open(_ context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[int64], error) {
	next := int64(info.Subtask)
	if pos != nil {
		var err error
		if next, err = strconv.ParseInt(string(pos), 10, 64); err != nil {
			return nil, err
		}
	}
	return &fillReader{s: s, next: next, step: int64(info.Parallelism)}, nil
}

// Rescale moves the readers to the end: the benchmark restores only
// after every record was read.
func (s *fillSource) Rescale(old []connector.Position, n int) ([]connector.Position, error) {
	out := make([]connector.Position, n)
	for i := range out {
		out[i] = connector.Position(strconv.FormatInt(s.limit+int64(i), 10))
	}
	return out, nil
}

type fillReader struct {
	s          *fillSource
	next, step int64
	told       bool
}

func (r *fillReader) Read(ctx context.Context, buf []int64) (int, error) {
	n := 0
	for n < len(buf) && r.next < r.s.limit {
		buf[n] = r.next
		r.next += r.step
		n++
	}
	if n > 0 {
		return n, nil
	}
	if !r.told {
		r.told = true
		r.s.mu.Lock()
		if r.s.done++; r.s.done == r.s.par {
			close(r.s.ready)
		}
		r.s.mu.Unlock()
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(5 * time.Millisecond):
		return 0, nil
	}
}

func (r *fillReader) Position() connector.Position {
	return connector.Position(strconv.FormatInt(r.next, 10))
}

func (r *fillReader) Close() error { return nil }
