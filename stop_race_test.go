package weir_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
)

// endingSource emits n numbers, then waits for a snapshot of its position
// and ends: the End of its input follows the barrier of the checkpoint
// right behind it. ready closes when it has emitted all of them.
type endingSource struct {
	n     int64
	once  sync.Once
	ready chan struct{}
}

func (s *endingSource) Open(context.Context, connector.SubtaskInfo, connector.Position) (connector.Reader[int64], error) {
	return &endingReader{s: s}, nil
}

type endingReader struct {
	s       *endingSource
	next    int64
	snapped bool
}

func (r *endingReader) Read(_ context.Context, buf []int64) (int, error) {
	n := 0
	for n < len(buf) && r.next < r.s.n {
		buf[n] = r.next
		r.next++
		n++
	}
	if n > 0 {
		return n, nil
	}
	r.s.once.Do(func() { close(r.s.ready) })
	if r.snapped {
		return 0, errEOF
	}
	return 0, nil
}

func (r *endingReader) Position() connector.Position {
	if r.next >= r.s.n {
		r.snapped = true
	}
	return nil
}

func (r *endingReader) Close() error { return nil }

// committingSink closes committed at its first commit.
type committingSink struct {
	once      sync.Once
	committed chan struct{}
}

func (s *committingSink) Open(context.Context, connector.SubtaskInfo) (connector.Writer[int64], error) {
	return s, nil
}
func (s *committingSink) Write(context.Context, []int64) error             { return nil }
func (s *committingSink) Flush(context.Context) error                      { return nil }
func (s *committingSink) Close() error                                     { return nil }
func (s *committingSink) PreCommit(context.Context, int64) ([]byte, error) { return []byte("t"), nil }
func (s *committingSink) Recover(context.Context, int64, [][]byte) error   { return nil }
func (s *committingSink) Commit(context.Context, []byte) error {
	s.once.Do(func() { close(s.committed) })
	return nil
}

// lateFlushSink ends its input only after the other sink committed: its
// subtask finishes, and tells the job so, after the job learnt that the
// savepoint's checkpoint completed.
// Its first flush is the savepoint's (an idempotent sink flushes at every
// checkpoint), its second the end of its input.
type lateFlushSink struct {
	after   <-chan struct{}
	flushes int
}

func (s *lateFlushSink) Open(context.Context, connector.SubtaskInfo) (connector.Writer[int64], error) {
	return s, nil
}
func (s *lateFlushSink) Write(context.Context, []int64) error { return nil }
func (s *lateFlushSink) Flush(ctx context.Context) error {
	if s.flushes++; s.flushes == 1 {
		return nil
	}
	select {
	case <-s.after:
	case <-ctx.Done():
	}
	return nil
}
func (s *lateFlushSink) Close() error     { return nil }
func (s *lateFlushSink) Idempotent() bool { return true }

// A job whose input ends right after the savepoint it stops with: a sink
// finishes (and tells the job so) while the job waits for the sinks to
// commit the savepoint. The stop must end the run, not hang it.
func TestAStopWithASavepointRightBeforeTheInputEndsEnds(t *testing.T) {
	src := &endingSource{n: 1000, ready: make(chan struct{})}
	committing := &committingSink{committed: make(chan struct{})}
	p := weir.NewPipeline(weir.WithParallelism(1), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: time.Hour}))
	in := weir.FromSource(p, "numbers", src)
	weir.To(in, "committing", committing)
	weir.To(in, "late-flush", &lateFlushSink{after: committing.committed})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	<-src.ready
	sp, err := p.StopWithSavepoint(ctx, t.TempDir())
	if runErr := <-done; err != nil || runErr != nil {
		t.Fatalf("stop with savepoint: %v; Run: %v", err, runErr)
	}
	if !p.Report().Stopped {
		t.Fatal("the run did not stop after its savepoint")
	}
	// Every subtask finished while the job waited for the commits: no
	// final checkpoint may follow the savepoint, or it would commit
	// output a run restored from the savepoint writes again.
	for _, c := range p.Report().Checkpoints {
		if c.ID > sp.Checkpoint {
			t.Fatalf("checkpoint %d (%s) followed the stop's savepoint, checkpoint %d", c.ID, c.Status, sp.Checkpoint)
		}
	}
}
