package exchange

import (
	"context"
	"errors"
	"testing"
	"time"
)

func data(n int) Element { return Element{Kind: Data, Buf: &Buffer{N: n}} }

func TestGateKeepsFIFOPerChannelAndTakesTurns(t *testing.T) {
	g := NewGate(2, 4)
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		if err := g.Send(ctx, 0, data(i)); err != nil {
			t.Fatal(err)
		}
		if err := g.Send(ctx, 1, data(10+i)); err != nil {
			t.Fatal(err)
		}
	}
	var got []int
	for {
		_, e, ok := g.Poll()
		if !ok {
			break
		}
		got = append(got, e.Buf.N)
	}
	want := []int{1, 11, 2, 12, 3, 13}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestGateBackpressureBlocksSenderUntilPoll(t *testing.T) {
	g := NewGate(1, 2)
	ctx := context.Background()
	g.Send(ctx, 0, data(1))
	g.Send(ctx, 0, data(2))
	sent := make(chan error)
	go func() { sent <- g.Send(ctx, 0, data(3)) }()
	select {
	case <-sent:
		t.Fatal("send to a full channel returned before the receiver made room")
	default:
	}
	if _, e, _ := g.Poll(); e.Buf.N != 1 {
		t.Fatalf("got %d, want 1", e.Buf.N)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{2, 3} {
		if _, e, ok := g.Poll(); !ok || e.Buf.N != want {
			t.Fatalf("got %v %v, want %d", e, ok, want)
		}
	}
}

func TestGateBlockedChannelIsSkippedAndKeepsItsElements(t *testing.T) {
	g := NewGate(2, 4)
	ctx := context.Background()
	g.Send(ctx, 0, Element{Kind: Barrier, Checkpoint: 1})
	g.Send(ctx, 0, data(5))
	g.Send(ctx, 1, data(7))
	g.Block(0)
	if ch, e, ok := g.Poll(); !ok || ch != 1 || e.Buf.N != 7 {
		t.Fatalf("got channel %d %v %v, want channel 1 with 7", ch, e, ok)
	}
	if _, _, ok := g.Poll(); ok {
		t.Fatal("polled a blocked channel")
	}
	if snap := g.Snapshot(0); len(snap) != 2 || snap[0].Kind != Barrier {
		t.Fatalf("snapshot of blocked channel: %v", snap)
	}
	g.Unblock(0)
	select {
	case <-g.Ready():
	default:
		t.Fatal("Unblock did not signal Ready")
	}
	if _, e, ok := g.Poll(); !ok || e.Kind != Barrier {
		t.Fatalf("got %v, want the barrier", e)
	}
}

// A send to a blocked channel wakes no one, unless the gate is watched:
// a receiver that takes its channels in an order of its own waits for
// any of them, blocked or not.
func TestAWatchedGateSignalsSendsToBlockedChannels(t *testing.T) {
	g := NewGate(1, 4)
	g.Block(0)
	signalled := func() bool {
		select {
		case <-g.Ready():
			return true
		default:
			return false
		}
	}
	signalled() // Block does not signal; drop any stale signal
	g.Send(context.Background(), 0, data(1))
	if signalled() {
		t.Fatal("a send to a blocked channel signalled Ready")
	}
	g.Watch(true)
	for name, send := range map[string]func(){
		"Send":          func() { g.Send(context.Background(), 0, data(2)) },
		"Deliver":       func() { g.Deliver(0, data(3)) },
		"DeliverReplay": func() { g.DeliverReplay(0, data(4)) },
	} {
		send()
		if !signalled() {
			t.Fatalf("%s to a blocked channel of a watched gate did not signal Ready", name)
		}
	}
	g.Watch(false)
	g.Send(context.Background(), 0, data(5))
	if signalled() {
		t.Fatal("a send to a blocked channel signalled Ready after the watch ended")
	}
	g.Drain()
}

func TestGateSendGivesUpWhenCancelled(t *testing.T) {
	g := NewGate(1, 1)
	g.Send(context.Background(), 0, data(1))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := g.Send(ctx, 0, data(2)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want deadline exceeded", err)
	}
}

func TestDrainRecyclesBuffers(t *testing.T) {
	g := NewGate(2, 2)
	g.Send(context.Background(), 0, Element{Kind: Data, Buf: GetBuffer()})
	g.Send(context.Background(), 1, Element{Kind: End})
	g.Drain()
	if _, _, ok := g.Poll(); ok {
		t.Fatal("elements left after Drain")
	}
}

// A replayed backlog goes in at once, beyond the capacity; live sends
// queue behind it in FIFO order and wait only for room among live
// elements, which the backlog's consumption makes.
func TestGateReplayBacklogDoesNotBlockTheSender(t *testing.T) {
	g := NewGate(1, 2)
	for i := range 50 {
		g.DeliverReplay(0, data(i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for i := range 2 {
		if err := g.Send(ctx, 0, data(100+i)); err != nil {
			t.Fatalf("live send %d behind the backlog: %v", i, err)
		}
	}
	short, cancelShort := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancelShort()
	if err := g.Send(short, 0, data(200)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a third live send found room in a channel of capacity 2: %v", err)
	}
	for i := range 52 {
		_, e, ok := g.Poll()
		want := i
		if i >= 50 {
			want = 100 + i - 50
		}
		if !ok || e.Buf.N != want {
			t.Fatalf("element %d: got %v (ok %v), want %d", i, e.Buf, ok, want)
		}
	}
	if err := g.Send(ctx, 0, data(300)); err != nil {
		t.Fatalf("live send after the backlog was consumed: %v", err)
	}
}

// A discarding gate (its receiver failed) drops what is sent, and never
// blocks the sender, until Reset.
func TestGateDiscardsUntilReset(t *testing.T) {
	g := NewGate(1, 1)
	g.Discard()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for i := range 10 {
		if err := g.Send(ctx, 0, data(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, ok := g.Poll(); ok {
		t.Fatal("a discarding gate delivered an element")
	}
	g.Reset()
	if err := g.Send(ctx, 0, data(7)); err != nil {
		t.Fatal(err)
	}
	if _, e, ok := g.Poll(); !ok || e.Buf.N != 7 {
		t.Fatalf("after Reset got %v, %v", e, ok)
	}
}

// Remote senders get credit back only for what they spent it on: taking
// a replayed element returns none, taking a live one returns one, and a
// gate that drops what it holds (Discard) returns the credit of the live
// elements it dropped, as does one that drops what is delivered to it.
func TestGateReturnsCreditOnlyForLiveElements(t *testing.T) {
	g := NewGate(1, 4)
	credit := 0
	g.OnTake(func(int) { credit++ })
	g.Deliver(0, Element{Kind: Watermark, Time: 1})
	for i := range 3 {
		g.DeliverReplay(0, Element{Kind: Watermark, Time: int64(10 + i)})
	}
	g.Deliver(0, Element{Kind: Watermark, Time: 2})
	for range 5 {
		if _, _, ok := g.Poll(); !ok {
			t.Fatal("an element is missing")
		}
	}
	if credit != 2 {
		t.Fatalf("taking 2 live and 3 replayed elements returned %d credits, want 2", credit)
	}
	credit = 0
	g.Deliver(0, Element{Kind: Watermark, Time: 3})
	g.DeliverReplay(0, Element{Kind: Watermark, Time: 20})
	g.Discard()
	g.Deliver(0, Element{Kind: Watermark, Time: 4})
	if credit != 2 {
		t.Fatalf("dropping 1 live and 1 replayed element and then 1 live returned %d credits, want 2", credit)
	}
}

// An element put back after a poll comes first again, on a blocked
// channel too, without taking room from its sender or returning credit
// a second time.
func TestUnpollPutsAnElementBackAtTheHead(t *testing.T) {
	g := NewGate(1, 2)
	credits := 0
	g.OnTake(func(int) { credits++ })
	ctx := context.Background()
	for i := 1; i <= 2; i++ {
		if err := g.Send(ctx, 0, data(i)); err != nil {
			t.Fatal(err)
		}
	}
	_, e, _ := g.Poll()
	g.Unpoll(0, e)
	g.Block(0)
	if e, ok := g.PollChannel(0); !ok || e.Buf.N != 1 {
		t.Fatalf("got %v %+v, want the element put back", ok, e)
	}
	if e, ok := g.PollChannel(0); !ok || e.Buf.N != 2 {
		t.Fatalf("got %v %+v, want the next element", ok, e)
	}
	if credits != 2 {
		t.Fatalf("%d credits returned for 2 elements", credits)
	}
}
