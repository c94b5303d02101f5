package weirtest_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// trickle is how many numbers keyedCopy's slow source adds, at 400 a
// second.
const trickle = 400

// keyedCopy is a job at parallelism par that reads the numbers 0 to n-1
// as fast as it can and n to n+trickle-1 slowly, sends them through a
// keyed exchange and writes them to sink. The slow source's channels
// carry its barriers at once, the fast one's behind full queues when
// the sink is slow: alignments wait.
func keyedCopy(n int64, par int, sink connector.Sink[int64], opts ...weir.Option) *weir.Pipeline {
	p := weir.NewPipeline(append([]weir.Option{weir.WithName("keyed-copy"), weir.WithParallelism(par), weir.WithGuarantee(weir.ExactlyOnce)}, opts...)...)
	fast := weir.FromSource(p, "gen", generator.Sequence(0, n), weir.SourceUID("gen"))
	slow := weir.FromSource(p, "trickle", generator.Sequence(n, n+trickle, generator.WithRate(trickle)), weir.SourceUID("trickle"))
	src := weir.Union(fast, slow)
	out := weir.Process(weir.KeyBy(src, func(v int64) int64 { return v % 97 }), func() weir.KeyedProcessFunction[int64, int64, int64] {
		return weir.ProcessFunc[int64, int64, int64](func(ctx *weir.KeyedContext[int64, int64], v int64) error {
			ctx.Emit(v)
			return nil
		})
	}, weir.UID("copy"))
	weir.To(out, "sink", sink)
	return p
}

// A job that takes unaligned checkpoints, or switches to them at an
// aligned timeout, takes its savepoint aligned: a slow sink keeps the
// queues of the keyed exchange full, where unaligned barriers would
// overtake records and store them with the snapshot, but the savepoint's
// barriers wait in order and its snapshot holds no records in flight. A
// restore at another parallelism refuses a snapshot with records in
// flight (they belong to the channels of the old plan), so the restore
// at parallelism 3 is the check that there are none; the two runs
// together write every number exactly once.
func TestASavepointOfAnUnalignedJobUnderBackpressureRestoresAtAnotherParallelism(t *testing.T) {
	for _, c := range []struct {
		name string
		ck   weir.CheckpointConfig
	}{
		{"unaligned", weir.CheckpointConfig{Unaligned: true}},
		{"aligned timeout", weir.CheckpointConfig{AlignedTimeout: time.Millisecond}},
	} {
		t.Run(c.name, func(t *testing.T) { savepointUnderBackpressure(t, c.ck) })
	}
}

// savepointUnderBackpressure stops a job taking checkpoints as ck says
// (every 20ms) with a savepoint while its sink is slow, and checks that
// it restores at another parallelism, exactly once.
func savepointUnderBackpressure(t *testing.T, ck weir.CheckpointConfig) {
	const n = 2_000_000
	dir := t.TempDir()
	busy := make(chan struct{})
	var batches atomic.Int64
	first := slowSink{Sink: weirtest.NewSink[int64](), delay: 5 * time.Millisecond, wrote: func() {
		if batches.Add(1) == 20 { // long after the queues filled
			close(busy)
		}
	}}
	ck.Interval, ck.StateDir = 20*time.Millisecond, filepath.Join(dir, "state")
	a := keyedCopy(n, 2, first, weir.WithCheckpoints(ck))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	select {
	case <-busy:
	case err := <-done:
		t.Fatalf("the job ended before the sink was busy: %v", err)
	}
	sp, err := a.StopWithSavepoint(ctx, filepath.Join(dir, "savepoints"))
	if err != nil {
		t.Fatalf("stop with savepoint: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the job stopped with a savepoint: Run = %v, want nil", err)
	}
	_, largest, _ := stats(a.Report())
	t.Logf("savepoint of checkpoint %d: %d bytes; the largest checkpoint (with records in flight): %d bytes", sp.Checkpoint, sp.Bytes, largest)

	// The same sink, no longer slow: the restore commits what the
	// savepoint pre-committed in it.
	b := keyedCopy(n, 3, first.Sink, weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond}), weir.WithRestore(sp.Path))
	if err := b.Run(ctx); err != nil {
		t.Fatalf("restore of the savepoint of checkpoint %d at parallelism 3: %v", sp.Checkpoint, err)
	}
	if b.Report().Restored != sp.Checkpoint {
		t.Fatalf("the restored run restored checkpoint %d, want the savepoint's %d", b.Report().Restored, sp.Checkpoint)
	}
	got := first.Values()
	seen := make([]bool, n+trickle)
	for _, v := range got {
		if v < 0 || v >= n+trickle || seen[v] {
			t.Fatalf("%d written twice or out of range", v)
		}
		seen[v] = true
	}
	if len(got) != n+trickle {
		t.Fatalf("%d numbers written in both runs, want %d", len(got), n+trickle)
	}
}
