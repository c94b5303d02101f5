package task

import (
	"context"
	"testing"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/plan"
)

// A subtask stopped while it waits for room to send a full buffer has
// sent that buffer's records once, not twice: what it sent is the catch-up
// target of its next incarnation, which regenerates exactly the records,
// and a target one buffer too high made a deterministic task restarted
// alone near its end finish "behind" its previous incarnation and fail
// the job as not deterministic.
func TestAWriterStoppedWhileSendingCountsTheBufferOnce(t *testing.T) {
	c, err := codec.For[int64]()
	if err != nil {
		t.Fatal(err)
	}
	gate := exchange.NewGate(1, 1)
	if err := gate.Send(context.Background(), 0, exchange.Element{Kind: exchange.Watermark}); err != nil {
		t.Fatal(err) // the queue is full: the next send waits
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stopped: a send that waits fails
	w := NewWriter(&Context{Ctx: ctx, MaxParallelism: 128, Metrics: &Metrics{}}, c, plan.Forward, nil,
		[]exchange.Channel{{Gate: gate, Index: 0}})
	n := int64(0)
	func() {
		defer func() {
			if p := recover(); p == nil {
				t.Error("the send into a full queue of a stopped subtask did not fail")
			} else if _, ok := p.(failure); !ok {
				panic(p)
			}
		}()
		for {
			n++
			w.Collect(n, n) // ships the buffer once it is full
		}
	}()
	if got := w.Sent()[0]; got != n {
		t.Fatalf("the writer counts %d records sent, want the %d it was given", got, n)
	}
}
