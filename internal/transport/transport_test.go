package transport

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weir-stream/weir/internal/exchange"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type setup struct {
	a, b     *Node
	snd, rcv *Endpoint
	g        *exchange.Gate // the gate of subtask 0 of vertex 1, on b
	failed   chan error
}

// pair starts two nodes and registers endpoint "job/1" on both; b runs
// subtask 0 of vertex 1, whose gate has the given channels and capacity.
func pair(t *testing.T, capacity, channels int) *setup {
	t.Helper()
	return pairWith(t, capacity, channels, Config{}, Config{})
}

// pairWith is pair with the nodes' configurations.
func pairWith(t *testing.T, capacity, channels int, ca, cb Config) *setup {
	t.Helper()
	s := &setup{g: exchange.NewGate(channels, capacity), failed: make(chan error, 2)}
	var err error
	if s.a, err = Listen("127.0.0.1:0", ca); err != nil {
		t.Fatal(err)
	}
	if s.b, err = Listen("127.0.0.1:0", cb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.a.Close(); s.b.Close() })
	fail := func(err error) { s.failed <- err }
	s.rcv, err = s.b.Register("job/1", capacity, func(v, i int) *exchange.Gate {
		if v == 1 && i == 0 {
			return s.g
		}
		return nil
	}, fail)
	if err != nil {
		t.Fatal(err)
	}
	s.g.OnTake(func(ch int) { s.rcv.Credit(1, 0, ch) })
	if s.snd, err = s.a.Register("job/1", capacity, func(int, int) *exchange.Gate { return nil }, fail); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.snd.Close(); s.rcv.Close() })
	return s
}

func data(n int) exchange.Element {
	b := exchange.GetBuffer()
	b.B = append(b.B, byte(n), byte(n>>8))
	b.N = 1
	return exchange.Element{Kind: exchange.Data, Buf: b}
}

// poll waits for the next element of g.
func poll(t *testing.T, g *exchange.Gate) (int, exchange.Element) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		if ch, e, ok := g.Poll(); ok {
			return ch, e
		}
		select {
		case <-g.Ready():
		case <-timeout:
			t.Fatal("no element arrived")
		}
	}
}

func TestElementsArriveInOrderWithTheirFields(t *testing.T) {
	s := pair(t, 8, 2)
	snd := s.snd.Sender(s.b.Addr(), 1, 0, 1)
	want := []exchange.Element{data(7), {Kind: exchange.Watermark, Time: -5},
		{Kind: exchange.Barrier, Checkpoint: 9, Unaligned: true}, data(300),
		{Kind: exchange.Barrier, Checkpoint: 10, MustAlign: true}, {Kind: exchange.End}}
	first := map[int]byte{0: 7, 3: 300 & 0xff} // the payloads, which the sender gives away
	for _, e := range want {
		if _, err := snd.SendTimed(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	for i, w := range want {
		ch, e := poll(t, s.g)
		if ch != 1 || e.Kind != w.Kind || e.Time != w.Time || e.Checkpoint != w.Checkpoint || e.Unaligned != w.Unaligned || e.MustAlign != w.MustAlign {
			t.Fatalf("element %d: got channel %d %+v, want channel 1 %+v", i, ch, e, w)
		}
		if e.Kind == exchange.Data && (e.Buf.N != 1 || len(e.Buf.B) != 2 || e.Buf.B[0] != first[i]) {
			t.Fatalf("element %d: got buffer %v (%d records)", i, e.Buf.B, e.Buf.N)
		}
	}
}

// A sender never has more elements in flight than the receiver's queue
// holds: without credit it waits, and each element the receiver takes
// lets exactly one more through.
func TestSenderWaitsForCredit(t *testing.T) {
	const capacity = 3
	s := pair(t, capacity, 1)
	snd := s.snd.Sender(s.b.Addr(), 1, 0, 0)
	for i := range capacity {
		if _, err := snd.SendTimed(context.Background(), data(i)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err := snd.SendTimed(ctx, data(99))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a send beyond the credit returned %v, want it to wait until its context ended", err)
	}
	poll(t, s.g) // returns one credit
	if _, err := snd.SendTimed(context.Background(), data(3)); err != nil {
		t.Fatalf("a send after the receiver took an element: %v", err)
	}
	if got := s.g.Fill(); got > 1 {
		t.Fatalf("gate fill %v exceeds its capacity", got)
	}
}

// A priority barrier needs no credit and overtakes the receiver's queue.
func TestPriorityBarrierOvertakesWithoutCredit(t *testing.T) {
	s := pair(t, 1, 1)
	snd := s.snd.Sender(s.b.Addr(), 1, 0, 0)
	if _, err := snd.SendTimed(context.Background(), data(1)); err != nil {
		t.Fatal(err)
	}
	snd.SendPriority(exchange.Element{Kind: exchange.Barrier, Checkpoint: 4, Unaligned: true})
	timeout := time.After(10 * time.Second)
	for len(s.g.Snapshot(0)) < 2 { // the data element and the barrier's marker
		select {
		case <-s.g.Ready():
		case <-timeout:
			t.Fatalf("queue holds %+v", s.g.Snapshot(0))
		}
	}
	if q := s.g.Snapshot(0); q[0].Kind != exchange.Data || q[1].Kind != exchange.Marker {
		t.Fatalf("queue: %+v, want the data element and then the barrier's marker", q)
	}
	if ch, e := poll(t, s.g); ch != 0 || e.Kind != exchange.Barrier || e.Checkpoint != 4 {
		t.Fatalf("first element polled: %+v on channel %d, want barrier 4", e, ch)
	}
}

func TestBrokenConnectionFailsTheReceiver(t *testing.T) {
	s := pair(t, 4, 1)
	snd := s.snd.Sender(s.b.Addr(), 1, 0, 0)
	if _, err := snd.SendTimed(context.Background(), data(1)); err != nil {
		t.Fatal(err)
	}
	poll(t, s.g)
	s.a.Close() // the sending process dies before its channel ended
	select {
	case err := <-s.failed:
		if err == nil {
			t.Fatal("nil failure")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the receiver was not failed")
	}
}

func TestFinishedChannelsCloseCleanly(t *testing.T) {
	s := pair(t, 4, 1)
	snd := s.snd.Sender(s.b.Addr(), 1, 0, 0)
	for _, e := range []exchange.Element{data(1), {Kind: exchange.End}} {
		if _, err := snd.SendTimed(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	poll(t, s.g)
	poll(t, s.g)
	s.snd.Close()
	s.rcv.Close()
	select {
	case err := <-s.failed:
		t.Fatalf("a clean end failed the attempt: %v", err)
	default:
	}
}

func TestUnreachablePeerFailsTheSend(t *testing.T) {
	n, err := Listen("127.0.0.1:0", Config{DialTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ep, err := n.Register("k", 2, func(int, int) *exchange.Gate { return nil }, func(error) {})
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	_, err = ep.Sender("127.0.0.1:1", 0, 0, 0).SendTimed(context.Background(), data(1))
	if err == nil {
		t.Fatal("sending to a closed port succeeded")
	}
}
