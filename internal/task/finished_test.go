package task

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/input"
	"github.com/weir-stream/weir/internal/plan"
)

// waitFor waits for done, or fails the test with every goroutine's stack
// when it does not come within a bound far beyond any scheduling delay:
// a hang fails with who waits on whom.
func waitFor(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(time.Minute):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s: still waiting after a minute; goroutines:\n%s", what, buf[:runtime.Stack(buf, true)])
	}
}

// A subtask that finished its input waits for release, but keeps taking
// what arrives on its gate: a sender that restarted alone regenerates the
// output the finished subtask consumed, up to its end again, and would
// block forever on a full queue nobody reads (it then never finishes,
// and the final checkpoint never completes).
func TestAFinishedSubtaskDropsARestartedSendersRegeneratedOutput(t *testing.T) {
	rt := &Runtime{opts: Options{Checkpoint: Aligned, Now: time.Now, Host: NopHost{}}, cursors: [][][][]*cursor{{nil}}}
	s := &subtask{rt: rt, v: &plan.Vertex{}, ctx: context.Background(), gate: exchange.NewGate(1, 2),
		decode: make([]Decoder, 1), inChan: make([]dataflow.Channel, 1), inbox: make(chan control, 4),
		finished: true, tctx: Context{Metrics: NewMetrics()}}
	s.in, _ = s.newInput(1)
	ended := &input.Watermarks{Input: input.MaxWatermark, Channels: []input.ChannelMark{{Watermark: input.MaxWatermark, State: input.ChanEnded}}}
	if err := s.in.Restore(input.State{Counts: []int64{100}, Watermarks: ended}); err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() { released <- s.waitReleased() }()
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for seq := int64(0); seq < 100; seq += 10 {
			if err := s.gate.Send(context.Background(), 0, batch(seq, 10)); err != nil {
				t.Error(err)
				return
			}
		}
		s.gate.Send(context.Background(), 0, exchange.Element{Kind: exchange.End, Seq: 100})
	}()
	waitFor(t, sent, "the restarted sender sending its regenerated output to the finished subtask")
	s.inbox <- control{kind: ctlRelease}
	done := make(chan struct{})
	go func() {
		if err := <-released; err != nil {
			t.Errorf("waitReleased: %v", err)
		}
		close(done)
	}()
	waitFor(t, done, "the release")
	if got := s.tctx.Metrics.Duplicates.Load(); got != 100 {
		t.Errorf("dropped %d duplicate records, want 100", got)
	}
}

// batch is a data element of n records from record seq on.
func batch(seq int64, n int) exchange.Element {
	b := exchange.GetBuffer()
	b.N = n
	return exchange.Element{Kind: exchange.Data, Buf: b, Seq: seq}
}

// The job learns of a subtask's end through Host.Finished, which an
// incarnation may still be calling, or about to call, when the job stops
// it to restart with a failed one (its cone). That end is not the next
// incarnation's, which has its input still to read: taken for it, the
// job triggered checkpoints at the running incarnation as at a finished
// one (it took its snapshots mid-stream) and took the final checkpoint
// before the end.
func TestTheEndOfAStoppedIncarnationIsNotTheSubtasksEnd(t *testing.T) {
	id := dataflow.SubtaskID{Vertex: 0, Subtask: 0}
	ctx, cancel := context.WithCancelCause(context.Background())
	rt := &Runtime{finished: map[dataflow.SubtaskID]bool{}, down: map[dataflow.SubtaskID]bool{},
		cancels: [][]context.CancelCauseFunc{{cancel}}}
	rt.markFinished(ctx, id)
	if !rt.Finished(id) {
		t.Fatal("a subtask that finished its input does not report it")
	}
	rt.Stop([]dataflow.SubtaskID{id})
	if ctx.Err() == nil {
		t.Fatal("Stop did not stop the subtask")
	}
	if rt.Finished(id) {
		t.Error("the end of an incarnation stopped to restart counts as the subtask's end")
	}
	// Stopped while it ended its input: its goroutine notes the end after
	// the stop.
	rt.markFinished(ctx, id)
	if rt.Finished(id) {
		t.Error("the end an incarnation noted after it was stopped counts as the subtask's end")
	}
	rt.markFinished(context.Background(), id) // the next incarnation's end
	if !rt.Finished(id) {
		t.Error("the end of the next incarnation does not count")
	}
}
