package task

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/input"
	"github.com/weir-stream/weir/internal/plan"
)

// delivered records, in order, the channel and the one byte of each
// one-record batch a subtask delivers, and closes done after the
// want-th.
type delivered struct {
	got  *[]string
	ch   int
	want int
	done chan struct{}
}

func (d delivered) Decode(b *exchange.Buffer, from, to int) error {
	for i := from; i < to; i++ {
		*d.got = append(*d.got, fmt.Sprintf("%d:%d", d.ch, b.B[i]))
	}
	if len(*d.got) == d.want {
		close(d.done)
	}
	return nil
}

// follower returns a subtask with two input channels of capacity 2 that
// repeats order, and what it delivers.
func follower(ctx context.Context, limit int64, order []input.Turn, want int) (*subtask, *[]string, chan struct{}) {
	rt := &Runtime{opts: Options{Checkpoint: Aligned, Now: time.Now, Host: NopHost{}, RetainLimit: limit}}
	s := withInput(&subtask{rt: rt, v: &plan.Vertex{Chain: []*plan.Node{{Name: "count"}}}, ctx: ctx, gate: exchange.NewGate(2, 2),
		inbox: make(chan control), inChan: make([]dataflow.Channel, 2)}, 2)
	got, done := &[]string{}, make(chan struct{})
	for c := range s.decode {
		s.decode[c] = delivered{got: got, ch: c, want: want, done: done}
	}
	s.in.Follow(order)
	s.follow()
	return s, got, done
}

// sendRecords sends n one-record batches, numbered from 0, on channel ch
// of g, each batch's byte its number.
func sendRecords(ctx context.Context, g *exchange.Gate, ch, n int) error {
	for i := range n {
		b := exchange.GetBuffer()
		b.B, b.N = append(b.B[:0], byte(i)), 1
		if err := g.Send(ctx, ch, exchange.Element{Kind: exchange.Data, Buf: b, Seq: int64(i)}); err != nil {
			return err
		}
	}
	return nil
}

// Two subtasks restarted alone repeat their logged consumption orders
// and share two senders. A reads channel 1 first, which sender 2 feeds
// only after it sent B three batches; B reads channel 0 first, which
// sender 1 feeds only after it sent A three batches. The queues hold
// two: each sender waits for room at the subtask that waits for the
// other sender. Stashing what a subtask's other channels hold breaks
// the cycle (without it, the bubble deadlocked). Each repeats its order
// and then reads the rest.
func TestSubtasksRepeatingTheirOrdersDoNotWaitOnEachOtherThroughSharedSenders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		a, gotA, doneA := follower(ctx, 0, []input.Turn{{Ch: 1, UpTo: 1}, {Ch: 0, UpTo: 2}}, 4)
		b, gotB, doneB := follower(ctx, 0, []input.Turn{{Ch: 0, UpTo: 1}, {Ch: 1, UpTo: 2}}, 4)
		errs := make(chan error, 4)
		go func() { errs <- a.runInputs() }()
		go func() { errs <- b.runInputs() }()
		go func() { // sender 1
			if err := sendRecords(ctx, a.gate, 0, 3); err != nil {
				errs <- err
				return
			}
			errs <- sendRecords(ctx, b.gate, 0, 1)
		}()
		go func() { // sender 2
			if err := sendRecords(ctx, b.gate, 1, 3); err != nil {
				errs <- err
				return
			}
			errs <- sendRecords(ctx, a.gate, 1, 1)
		}()
		<-doneA
		<-doneB
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("a sender: %v", err)
			}
		}
		cancel()
		for range 2 {
			if err := <-errs; !errors.Is(err, context.Canceled) {
				t.Fatalf("a subtask stopped with %v, want the cancellation", err)
			}
		}
		if want := []string{"1:0", "0:0", "0:1", "0:2"}; !slices.Equal(*gotA, want) {
			t.Errorf("A delivered %v, want %v: its logged order, then the rest", *gotA, want)
		}
		if want := []string{"0:0", "1:0", "1:1", "1:2"}; !slices.Equal(*gotB, want) {
			t.Errorf("B delivered %v, want %v: its logged order, then the rest", *gotB, want)
		}
	})
}

// What a following subtask stashes goes back to its gate, in order, when
// it stops, and past the retain limit it fails with ErrBackupLost: the
// job rolls back globally instead.
func TestAStashGoesBackToTheGateAndIsBounded(t *testing.T) {
	ctx := context.Background()
	s, _, _ := follower(ctx, 0, []input.Turn{{Ch: 1, UpTo: 1}}, 1)
	if err := sendRecords(ctx, s.gate, 0, 2); err != nil {
		t.Fatal(err)
	}
	ch, _, ok := s.next()
	if ok || ch != 1 {
		t.Fatalf("next: channel %d, ok %v; want to wait for channel 1", ch, ok)
	}
	if err := s.stashOthers(ch); err != nil {
		t.Fatal(err)
	}
	if st := s.gate.Status(); st[0].Queued != 0 || s.stash.n != 2 {
		t.Fatalf("after stashing: %d queued on channel 0, %d stashed; want 0 and 2", st[0].Queued, s.stash.n)
	}
	if w := s.describeWait(); !strings.Contains(w, "holding 2 elements") {
		t.Errorf("the stall report says %q, want the stash", w)
	}
	s.unpollHeld()
	var seqs []int64
	for _, e := range s.gate.Snapshot(0) {
		seqs = append(seqs, e.Seq)
	}
	if !slices.Equal(seqs, []int64{0, 1}) || s.stash.n != 0 {
		t.Fatalf("after stopping, channel 0 holds records %v and %d are stashed; want [0 1] and none", seqs, s.stash.n)
	}

	s, _, _ = follower(ctx, 1, []input.Turn{{Ch: 1, UpTo: 1}}, 1)
	if err := sendRecords(ctx, s.gate, 0, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.stashOthers(1); !errors.Is(err, ErrBackupLost) || !strings.Contains(err.Error(), "more than the 1 bytes") {
		t.Fatalf("stashing past the limit: %v, want ErrBackupLost", err)
	}
}
