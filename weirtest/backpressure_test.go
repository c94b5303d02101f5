package weirtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// slowSink is a transactional sink that takes a while per batch, so the
// queues in front of it fill and backpressure reaches the source. wrote,
// if set, is called after each batch written.
type slowSink struct {
	*weirtest.Sink[int64]
	delay time.Duration
	wrote func()
}

func (s slowSink) Open(ctx context.Context, info connector.SubtaskInfo) (connector.Writer[int64], error) {
	w, err := s.Sink.Open(ctx, info)
	if err != nil {
		return nil, err
	}
	return slowWriter{w.(txnWriter), s.delay, s.wrote}, nil
}

type txnWriter interface {
	connector.Writer[int64]
	connector.Committer
}

type slowWriter struct {
	txnWriter
	delay time.Duration
	wrote func()
}

func (w slowWriter) Write(ctx context.Context, b []int64) error {
	time.Sleep(w.delay)
	if err := w.txnWriter.Write(ctx, b); err != nil {
		return err
	}
	if w.wrote != nil {
		w.wrote()
	}
	return nil
}

func backpressured(ck weir.CheckpointConfig) (*weir.Report, []int64, error) {
	p := weir.NewPipeline(weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce), weir.WithCheckpoints(ck))
	src := weir.FromSource(p, "gen", generator.Sequence(0, 1_000_000))
	out := weir.Process(weir.KeyBy(src, func(v int64) int64 { return v % 97 }), func() weir.KeyedProcessFunction[int64, int64, int64] {
		return weir.ProcessFunc[int64, int64, int64](func(ctx *weir.KeyedContext[int64, int64], v int64) error {
			ctx.Emit(v)
			return nil
		})
	})
	sink := slowSink{Sink: weirtest.NewSink[int64](), delay: 2 * time.Millisecond}
	weir.To(out, "slow-sink", connector.Sink[int64](sink))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := p.Run(ctx)
	return p.Report(), sink.Values(), err
}

func stats(r *weir.Report) (mean time.Duration, maxSize int64, n int) {
	var total time.Duration
	for _, c := range r.Checkpoints {
		if c.Status == "completed" {
			total += c.Duration
			maxSize = max(maxSize, c.Size)
			n++
		}
	}
	if n > 0 {
		mean = total / time.Duration(n)
	}
	return mean, maxSize, n
}

// With a slow sink, aligned barriers wait behind full queues at every
// task; unaligned barriers overtake them, storing the overtaken records
// with the snapshot. Both stay exactly-once. The durations are logged, not
// asserted (timing on a shared machine); what is asserted is that the
// unaligned snapshots did store in-flight records and the aligned ones did
// not need to.
func TestSlowSinkAlignedAndUnaligned(t *testing.T) {
	if testing.Short() {
		t.Skip("slow by design")
	}
	var results [2]struct {
		mean time.Duration
		size int64
		n    int
	}
	for i, unaligned := range []bool{false, true} {
		rep, got, err := backpressured(weir.CheckpointConfig{Interval: 20 * time.Millisecond, Unaligned: unaligned})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1_000_000 {
			t.Fatalf("unaligned=%v: %d records, want 1000000", unaligned, len(got))
		}
		seen := make(map[int64]bool, len(got))
		for _, v := range got {
			if seen[v] {
				t.Fatalf("unaligned=%v: %d written twice", unaligned, v)
			}
			seen[v] = true
		}
		mean, size, n := stats(rep)
		results[i].mean, results[i].size, results[i].n = mean, size, n
		t.Logf("unaligned=%v: %d checkpoints, mean duration %v, largest %d bytes", unaligned, n, mean, size)
	}
	if results[1].n == 0 || results[1].size <= results[0].size {
		t.Fatalf("unaligned checkpoints stored no in-flight records: largest %d bytes vs aligned %d", results[1].size, results[0].size)
	}
}
