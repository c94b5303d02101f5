package exchange

import (
	"context"
	"testing"
)

// A sender keeps a batch for replay (Retain) and sends it to a receiver
// that has not read it (a finished subtask no longer polls its gate).
// When a checkpoint completes, the sender releases the batch: it must
// stay intact in the gate, and go back to the pool once, when the gate
// is drained. A release that recycled it at once, with the drain
// recycling it again, put one buffer in the pool twice: two writers then
// filled it together, and batches carried another channel's records.
func TestBufferHeldByAReceiverOutlivesItsSendersRelease(t *testing.T) {
	b := GetBuffer()
	b.B = append(b.B, "records"...)
	b.N = 1
	b.Retain() // the sender's backup
	g := NewGate(1, 4)
	if err := g.Send(context.Background(), 0, Element{Kind: Data, Buf: b}); err != nil {
		t.Fatal(err)
	}
	b.Release() // the checkpoint completed
	if string(b.B) != "records" || b.N != 1 {
		t.Fatalf("the sender's release recycled a batch the receiver's gate holds: now %q, %d records", b.B, b.N)
	}
	g.Drain()
	if len(b.B) != 0 || b.N != 0 {
		t.Fatalf("the batch did not go back to the pool when its last holder was done: %q, %d records", b.B, b.N)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a buffer returned once more than it was held went back to the pool")
		}
	}()
	PutBuffer(b)
}

// A replay delivers a retained batch once more: each delivery is a
// holder, and the batch goes back to the pool when the receiver consumed
// both and the sender released it, whatever the order.
func TestReplayedBufferGoesBackAfterEveryHolder(t *testing.T) {
	b := GetBuffer()
	b.B = append(b.B, "x"...)
	b.Retain() // the backup
	g := NewGate(1, 4)
	if err := g.Send(context.Background(), 0, Element{Kind: Data, Buf: b}); err != nil {
		t.Fatal(err)
	}
	b.Retain() // a replay delivers it again
	g.DeliverReplay(0, Element{Kind: Data, Buf: b})
	for range 2 {
		_, e, ok := g.Poll()
		if !ok || string(e.Buf.B) != "x" {
			t.Fatalf("got %v %q, want the batch", ok, e.Buf.B)
		}
		PutBuffer(e.Buf)
	}
	if string(b.B) != "x" {
		t.Fatal("the receiver recycled a batch the sender still retains")
	}
	b.Release()
	if len(b.B) != 0 {
		t.Fatal("the batch did not go back to the pool after its last holder")
	}
}
