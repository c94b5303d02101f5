package task

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/determinant"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/input"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/standbylog"
)

// An instance behind its pair checks what it does not deliver against
// the control elements the pair delivered: the same element passes;
// another one, or a control element where records went, or records where
// a control element went, is a divergence.
func TestCursorCheckFindsDivergence(t *testing.T) {
	var c cursor
	c.record(10, exchange.Element{Kind: exchange.Barrier, Checkpoint: 3})
	c.record(20, exchange.Element{Kind: exchange.Watermark, Time: 500})
	c.pos = 30
	cases := []struct {
		at, n int64
		e     exchange.Element
		want  string // "" for no divergence
	}{
		{10, 1, exchange.Element{Kind: exchange.Barrier, Checkpoint: 3}, ""},
		{20, 1, exchange.Element{Kind: exchange.Watermark, Time: 500}, ""},
		{0, 10, exchange.Element{Kind: exchange.Data}, ""},
		{11, 9, exchange.Element{Kind: exchange.Data}, ""},
		{10, 1, exchange.Element{Kind: exchange.Barrier, Checkpoint: 4}, "barrier (4) where the other sent a barrier (3)"},
		{20, 1, exchange.Element{Kind: exchange.Idle}, "idle (0) where the other sent a watermark (500)"},
		{15, 1, exchange.Element{Kind: exchange.Watermark, Time: 400}, "watermark where the other sent records"},
		{5, 10, exchange.Element{Kind: exchange.Data}, "records where the other sent a barrier"},
	}
	for _, tc := range cases {
		err := c.check(tc.at, tc.n, tc.e)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s at %d: unexpected divergence: %v", tc.e.Kind, tc.at, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s at %d: got %v, want %q", tc.e.Kind, tc.at, err, tc.want)
		}
	}
}

// Positions older than the ring of recorded control elements are not
// checked: nothing is known about them.
func TestCursorCheckIgnoresPositionsOlderThanItsRing(t *testing.T) {
	var c cursor
	for i := range int64(100) {
		c.record(i*2, exchange.Element{Kind: exchange.Watermark, Time: i})
	}
	if err := c.check(1, 1, exchange.Element{Kind: exchange.Idle}); err != nil {
		t.Fatalf("an old position was checked: %v", err)
	}
	if err := c.check(199, 1, exchange.Element{Kind: exchange.Idle}); err == nil {
		t.Fatal("a recent divergence went unnoticed")
	}
}

// pairWriter returns a writer of int64 records on the one channel of
// gate g, sharing cursors cs, whose sends end with ctx.
func pairWriter(t *testing.T, ctx context.Context, g *exchange.Gate, cs []*cursor) *Writer[int64] {
	t.Helper()
	c, err := codec.For[int64]()
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(&Context{Ctx: ctx, Metrics: NewMetrics(), MaxParallelism: 128}, c, plan.Forward, nil,
		[]exchange.Channel{{Gate: g, Index: 0}})
	w.share(cs)
	return w
}

// failed runs f and returns the error it failed its task with (Fail),
// or nil.
func failed(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			f, ok := p.(failure)
			if !ok {
				panic(p)
			}
			err = f.err
		}
	}()
	f()
	return nil
}

// records collects the records it is given.
type records []int64

func (r *records) Collect(_ int64, v int64) { *r = append(*r, v) }

// pollData returns the first record and the sequence number of the next
// data batch in g, skipping control elements; ok is false when g holds
// none.
func pollData(t *testing.T, g *exchange.Gate) (v, seq int64, ok bool) {
	t.Helper()
	for {
		_, e, ok := g.Poll()
		if !ok {
			return 0, 0, false
		}
		if e.Kind != exchange.Data {
			continue
		}
		var got records
		if err := NewDecoder(codec.MustFor[int64](), &got, "test").Decode(e.Buf, 0, e.Buf.N); err != nil {
			t.Fatal(err)
		}
		return got[0], e.Seq, true
	}
}

// A primary stopped while its send waits for room has not delivered
// that batch: the cursor it shares with its standby does not count it,
// and the standby, which takes over, delivers it. The receiver sees no
// gap.
func TestStoppedSendLeavesItsPositionsToTheStandby(t *testing.T) {
	g := exchange.NewGate(1, 1)
	cs := []*cursor{{}}
	pctx, stop := context.WithCancel(context.Background())
	primary := pairWriter(t, pctx, g, cs)
	standby := pairWriter(t, context.Background(), g, cs)

	primary.Collect(1, 10)
	primary.Flush() // fills the channel
	stop()          // the primary is killed: its next send cannot wait for room
	primary.Collect(2, 20)
	if err := failed(primary.Flush); !errors.Is(err, context.Canceled) {
		t.Fatalf("the stopped primary's send: %v, want it cancelled", err)
	}
	if v, seq, ok := pollData(t, g); !ok || v != 10 || seq != 0 {
		t.Fatalf("first batch: %d at %d (%v), want record 10 at 0", v, seq, ok)
	}

	// The standby regenerates both batches: the first was delivered, the
	// second was not.
	standby.Collect(1, 10)
	standby.Flush()
	standby.Collect(2, 20)
	standby.Flush()
	v, seq, ok := pollData(t, g)
	if !ok {
		t.Fatal("the standby's copy of record 1 was dropped as delivered: the receiver has a gap")
	}
	if v != 20 || seq != 1 {
		t.Fatalf("after the takeover the receiver got record %d at %d, want 20 at 1", v, seq)
	}
	if cs[0].pos != 2 {
		t.Fatalf("cursor at %d, want 2", cs[0].pos)
	}
}

// A subtask restarted alone without a completed checkpoint starts its
// output from position 0: the cursors it shares with its standby move
// there and forget what the failed incarnation delivered, whose barriers
// (of checkpoints aborted since) it does not send again. Its first
// barrier is delivered, not called a divergence.
func TestSubtaskRestartedWithoutCheckpointRestartsItsCursors(t *testing.T) {
	g := exchange.NewGate(1, 4)
	cs := []*cursor{{}}
	old := pairWriter(t, context.Background(), g, cs)
	old.Emit(exchange.Element{Kind: exchange.Barrier, Checkpoint: 1})
	g.Drain()

	w := pairWriter(t, context.Background(), g, cs)
	s := &subtask{rt: &Runtime{}, v: &plan.Vertex{}, outs: []ChannelWriter{w}, role: restartedRole(false)}
	if err := s.restore(); err != nil {
		t.Fatal(err)
	}
	if err := failed(func() { w.Emit(exchange.Element{Kind: exchange.Barrier, Checkpoint: 2}) }); err != nil {
		t.Fatalf("the restarted subtask's first barrier: %v", err)
	}
	if _, e, ok := g.Poll(); !ok || e.Kind != exchange.Barrier || e.Checkpoint != 2 {
		t.Fatalf("got %v %+v, want barrier 2 delivered", ok, e)
	}
}

// A primary with an active standby that fails after it took an element from its gate
// but before it logged it (an injected failure when a checkpoint
// completes, handled between the two) puts the element back: its standby,
// which applies the log and then reads the gate, takes its place without
// losing those records.
func TestPrimaryFailingBeforeItLogsAnElementLeavesItInItsGate(t *testing.T) {
	g := exchange.NewGate(1, 4)
	b := exchange.GetBuffer()
	b.B, b.N = append(b.B, 1, 2, 3), 1
	if err := g.Send(context.Background(), 0, exchange.Element{Kind: exchange.Data, Buf: b, Seq: 0}); err != nil {
		t.Fatal(err)
	}
	inbox := make(chan control, 1)
	inbox <- control{kind: ctlComplete, checkpoint: 1}
	rt := &Runtime{opts: Options{Inject: func(p Point, _ dataflow.SubtaskID, _ int64) bool { return p == PointCompleteBeforeCommit }}}
	s := withInput(&subtask{rt: rt, v: &plan.Vertex{Chain: []*plan.Node{{Name: "count"}}}, ctx: context.Background(), gate: g, inbox: inbox,
		log: standbylog.New(0), inChan: make([]dataflow.Channel, 1)}, 1)
	var injected *InjectedError
	if err := failed(func() { _ = s.runInputs() }); !errors.As(err, &injected) {
		t.Fatalf("the primary stopped with %v, want the injected failure", err)
	}
	if n := s.log.Len(); n != 0 {
		t.Fatalf("the log holds %d entries, want none: the element was not consumed", n)
	}
	_, e, ok := g.Poll()
	if !ok || e.Kind != exchange.Data || e.Buf != b {
		t.Fatalf("the gate gives %v %+v, want the batch the primary took: its standby would miss those records", ok, e)
	}
}

// standbyAtTheEnd returns a runtime whose subtask 0 of vertex 0 has a
// standby with its primary's logged end of input left to apply.
func standbyAtTheEnd(t *testing.T) (*Runtime, *subtask, *standby) {
	t.Helper()
	v := &plan.Vertex{}
	l := standbylog.New(0)
	l.Append(standbylog.Entry{Kind: standbylog.Element, Ch: 0, E: exchange.Element{Kind: exchange.End}})
	rt := &Runtime{opts: Options{Now: time.Now, Host: NopHost{}}, gates: [][]*exchange.Gate{{exchange.NewGate(1, 2)}},
		inboxes: [][]chan control{{make(chan control, 1)}}, dets: [][]*determinant.Log{{nil}}, logs: [][]*standbylog.Log{{l}},
		metrics: [][]*Metrics{{NewMetrics()}}, cancels: [][]context.CancelCauseFunc{{nil}}, exited: map[dataflow.SubtaskID]chan struct{}{}, finished: map[dataflow.SubtaskID]bool{}, standbys: map[dataflow.SubtaskID]*standby{}}
	s := withInput(&subtask{rt: rt, v: v, ctx: context.Background(), gate: exchange.NewGate(1, 1), inbox: make(chan control, 1),
		inChan: make([]dataflow.Channel, 1), inWM: dataflow.MaxWatermark}, 1)
	wms := &input.Watermarks{Input: dataflow.MaxWatermark, Channels: []input.ChannelMark{{Watermark: dataflow.MaxWatermark}}}
	if err := s.in.Restore(input.State{Counts: []int64{0}, Watermarks: wms}); err != nil {
		t.Fatal(err)
	}
	st := &standby{s: s, exited: make(chan struct{})}
	s.standby, s.role = st, standbyRole(false, false)
	rt.standbys[dataflow.SubtaskID{}] = st
	return rt, s, st
}

// A standby whose primary failed after it consumed the end of its input
// (on the final checkpoint, which finished subtasks take on request)
// takes the subtask's place when it applies that end: the subtask must
// take the final checkpoint and wait for its release. It used to end
// there like a standby whose primary runs on, and the job waited forever
// for the final checkpoint of a subtask that had exited.
func TestAStandbyPromotedAtTheEndOfItsInputTakesOver(t *testing.T) {
	rt, s, st := standbyAtTheEnd(t)
	st.promoted = true
	delete(rt.standbys, dataflow.SubtaskID{})
	if err := s.runStandby(); err != nil {
		t.Fatal(err)
	}
	if s.standby != nil {
		t.Fatal("the promoted standby applied the end of its input and ended as a standby: the subtask exits without waiting for its release")
	}
	if s.inbox != rt.inboxes[0][0] || !rt.finished[dataflow.SubtaskID{}] {
		t.Fatal("the standby that took over does not read the subtask's inbox or is not marked finished")
	}
}

// A standby that applies the end of its input while its primary runs on
// ends, and is no standby any more: a later failure of the primary is not
// handed to it (the subtask restarts instead).
func TestAStandbyAtTheEndOfItsInputBeforeItsPrimaryFailsEnds(t *testing.T) {
	rt, s, _ := standbyAtTheEnd(t)
	if err := s.runStandby(); err != nil {
		t.Fatal(err)
	}
	if s.standby == nil {
		t.Fatal("a standby whose primary runs on took over")
	}
	if rt.takeover(dataflow.SubtaskID{}, errors.New("injected")) {
		t.Fatal("the primary's later failure was handed to a standby that ended")
	}
}
