package weir_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
)

// txSink is a two-phase-commit sink that records which checkpoint
// pre-committed each of its records.
type txSink struct {
	mu   sync.Mutex
	open []string
	at   map[string]int64 // record -> checkpoint that pre-committed it
}

func (s *txSink) Open(context.Context, connector.SubtaskInfo) (connector.Writer[weir.Windowed[string, int64]], error) {
	return s, nil
}

func (s *txSink) Write(_ context.Context, b []weir.Windowed[string, int64]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range b {
		s.open = append(s.open, fmt.Sprintf("%s [%d,%d) %d", r.Key, r.Window.Start, r.Window.End, r.Value))
	}
	return nil
}

func (s *txSink) PreCommit(_ context.Context, checkpoint int64) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.open {
		s.at[r] = checkpoint
	}
	s.open = nil
	return []byte("t"), nil
}

func (s *txSink) Flush(context.Context) error                    { return nil }
func (s *txSink) Close() error                                   { return nil }
func (s *txSink) Recover(context.Context, int64, [][]byte) error { return nil }
func (s *txSink) Commit(context.Context, []byte) error           { return nil }

// A source sends the watermark its records allow ahead of each barrier,
// not only at its periodic tick: a window those records closed fires
// before the snapshot, in the transaction of that checkpoint, instead of
// being stored in the snapshot. Here the periodic tick never comes, so
// without it both windows would fire at the end of the input, in one
// transaction.
func TestASourcesWatermarkGoesOutAheadOfEachBarrier(t *testing.T) {
	events := make([]ev, 2000)
	for i := range events {
		events[i] = ev{"a", int64(i + 1)} // [0,1000) gets 999, [1000,2000) 1000, [2000,3000) 1
	}
	p := weir.NewPipeline(weir.WithParallelism(1), weir.WithWatermarkInterval(time.Hour),
		weir.WithGuarantee(weir.ExactlyOnce), weir.WithCheckpoints(weir.CheckpointConfig{Interval: time.Millisecond}))
	// The source stops halfway, after the record at 1000, until a
	// snapshot took its position.
	src := weir.FromSource(p, "events", sliceSource[ev]{items: events, one: true, pauses: 1}, weir.WithTimestamps(evTime, 0))
	out := &txSink{at: map[string]int64{}}
	weir.To(weir.AggregateWindow(weir.WindowBy(weir.KeyBy(src, evKey), weir.Tumbling(time.Second)), count{}), "out", out)
	run(t, p)
	first, ok1 := out.at["a [0,1000) 999"]
	second, ok2 := out.at["a [1000,2000) 1000"]
	if !ok1 || !ok2 {
		t.Fatalf("pre-committed results %v, want both windows'", out.at)
	}
	if first >= second {
		t.Fatalf("the first window was pre-committed at checkpoint %d, the second at %d: want the first at the checkpoint of the pause, before the second", first, second)
	}
	if got := len(out.open); got != 0 {
		t.Fatalf("%d results never pre-committed", got)
	}
}
