package transport

import (
	"context"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/exchange"
)

// Under SurviveLostPeers a sender outlives its receiver's process: what
// it sends meanwhile is dropped without error, Move points it at the
// receiver's replacement (another node, another endpoint key) with fresh
// credit, and the replacement receives from then on.
func TestASurvivingSenderMovesToTheReplacementOfALostReceiver(t *testing.T) {
	s := pair(t, 2, 1)
	s.snd.SurviveLostPeers(time.Minute, nil)
	snd := s.snd.Sender(s.b.Addr(), 1, 0, 0)
	if _, err := snd.SendTimed(context.Background(), data(1)); err != nil {
		t.Fatal(err)
	}
	poll(t, s.g)
	s.rcv.Close() // the receiver's process is lost
	s.b.Close()
	for i := range 10 { // far beyond the credit: nothing waits, nothing fails
		if _, err := snd.SendTimed(context.Background(), data(i)); err != nil {
			t.Fatalf("send %d to a lost receiver: %v", i, err)
		}
	}
	select {
	case err := <-s.failed:
		t.Fatalf("the surviving endpoint failed: %v", err)
	default:
	}

	c, err := Listen("127.0.0.1:0", Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g := exchange.NewGate(1, 2)
	rcv, err := c.Register("job/1/r1", 2, func(v, i int) *exchange.Gate {
		if v == 1 && i == 0 {
			return g
		}
		return nil
	}, func(err error) { t.Errorf("the replacement failed: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	g.OnTake(func(ch int) { rcv.Credit(1, 0, ch) })
	s.snd.Move(1, 0, c.Addr(), "job/1/r1")
	for i := range 5 { // more than the credit: the replacement returns it
		if _, err := snd.SendTimed(context.Background(), data(40+i)); err != nil {
			t.Fatal(err)
		}
		if _, e := poll(t, g); e.Buf.B[0] != byte(40+i) {
			t.Fatalf("the replacement got record %d, want %d", e.Buf.B[0], 40+i)
		}
	}
}

// Sever cuts the connection that feeds a channel from a lost sender and
// reports where the last element delivered on it ended; the receiving
// endpoint survives.
func TestSeverCutsALostSendersChannelAndCountsItsRecords(t *testing.T) {
	s := pair(t, 8, 1)
	s.rcv.SurviveLostPeers(time.Minute, nil)
	s.snd.SurviveLostPeers(time.Minute, nil)
	snd := s.snd.Sender(s.b.Addr(), 1, 0, 0)
	for i, seq := range []int64{0, 1, 2} {
		e := data(i)
		e.Seq = seq
		if _, err := snd.SendTimed(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		poll(t, s.g)
	}
	if got := s.rcv.Sever([][3]int{{1, 0, 0}, {1, 0, 5}}); got[0] != 3 || got[1] != -1 {
		t.Fatalf("Sever reports %v, want [3 -1]: three records on channel 0, nothing on channel 5", got)
	}
	select {
	case err := <-s.failed:
		t.Fatalf("an endpoint failed: %v", err)
	default:
	}
}

// A connection that breaks while its sender lives on (nobody severs its
// channels, no replacement connects) is reported after the grace period,
// so that the job can restart the receivers; a severed one is not.
func TestABrokenConnectionFromALiveSenderIsReportedAfterTheGrace(t *testing.T) {
	for _, sever := range []bool{false, true} {
		s := pair(t, 8, 1)
		stalled := make(chan [][3]int, 1)
		s.rcv.SurviveLostPeers(50*time.Millisecond, func(chans [][3]int) { stalled <- chans })
		s.snd.SurviveLostPeers(time.Minute, nil)
		snd := s.snd.Sender(s.b.Addr(), 1, 0, 0)
		if _, err := snd.SendTimed(context.Background(), data(1)); err != nil {
			t.Fatal(err)
		}
		poll(t, s.g)
		if sever {
			s.rcv.Sever([][3]int{{1, 0, 0}})
		} else {
			s.rcv.mu.Lock()
			for in := range s.rcv.inbound {
				in.conn.Close() // the network, not the sender, broke it
			}
			s.rcv.mu.Unlock()
		}
		// A report must come, however loaded the machine: wait long. No
		// report must come for a severed connection: ten grace periods
		// without one pass (a slow machine can only delay a report).
		wait := 30 * time.Second
		if sever {
			wait = 500 * time.Millisecond
		}
		select {
		case got := <-stalled:
			if sever || len(got) != 1 || got[0] != [3]int{1, 0, 0} {
				t.Fatalf("sever=%v: reported %v", sever, got)
			}
		case <-time.After(wait):
			if !sever {
				t.Fatalf("a connection broken under a live sender was not reported within %v", wait)
			}
		}
	}
}

// A replay goes out without credit: a sender whose credit is spent
// replays its whole backlog to a receiver that takes nothing meanwhile.
func TestAReplayNeedsNoCredit(t *testing.T) {
	const capacity = 2
	s := pair(t, capacity, 1)
	snd := s.snd.Sender(s.b.Addr(), 1, 0, 0)
	for i := range capacity {
		if _, err := snd.SendTimed(context.Background(), data(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 { // beyond the credit, which is spent
		if err := snd.SendReplay(context.Background(), data(10+i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range capacity + 10 {
		want := i
		if i >= capacity {
			want = 10 + i - capacity
		}
		if _, e := poll(t, s.g); e.Buf.B[0] != byte(want) {
			t.Fatalf("element %d: got record %d, want %d", i, e.Buf.B[0], want)
		}
	}
}
