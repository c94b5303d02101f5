package task

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/backup"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/determinant"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/input"
	"github.com/weir-stream/weir/internal/plan"
)

// A restarted source asked for a replay from beyond what it has sent on
// the channel (its receiver, an active standby that took over, consumed
// more than the source regenerated yet) sends no barrier before it
// caught up: a checkpoint is deferred until it sent that far.
func TestSourceCatchesUpWithAReplayRequestBeforeItsBarrier(t *testing.T) {
	e := &plan.PhysicalEdge{Edge: &plan.Edge{To: &plan.Node{Name: "count"}}, Partitioning: plan.Hash}
	w := &sentWriter{sent: []int64{100, 100}}
	s := &subtask{rt: &Runtime{edgeIndex: map[*plan.PhysicalEdge]int{e: 0}}, v: &plan.Vertex{Outputs: []*plan.PhysicalEdge{e}},
		source: nopSource{}, outs: []ChannelWriter{w}, outWM: dataflow.MinWatermark}
	s.replay(control{kind: ctlReplay, edge: 0, to: 1, from: 250, incarnation: 1})
	if !s.catchingUp() {
		t.Fatal("a source 150 records short of a replay request is not catching up")
	}
	w.sent[1] = 249
	if !s.catchingUp() {
		t.Fatal("a source 1 record short of a replay request is not catching up")
	}
	w.sent[1] = 250
	if s.catchingUp() {
		t.Fatal("a source that sent what the replay request names still catches up")
	}
}

// sentWriter is a writer whose records sent the test sets; replays send
// nothing.
type sentWriter struct {
	ChannelWriter
	sent []int64
}

func (w *sentWriter) Replay(int, int64, int64, bool) error { return nil }
func (w *sentWriter) Sent() []int64                        { return append([]int64(nil), w.sent...) }

type nopSource struct{ SourceRunner }

// A promoted standby of a task that merges inputs refuses to take over
// when a surviving receiver holds more of the lost primary's output than
// the standby produced from the log that reached it (the failure falls
// back to a global rollback); at or below that, and for a task with one
// input (no consumption order to know), it takes over.
func TestAStandbyBehindWhatAReceiverHoldsRefusesToTakeOver(t *testing.T) {
	ch := dataflow.Channel{Edge: 1, From: 0, To: 1}
	takeOver := func(merges bool, held int64) (err error) {
		s := &subtask{outs: []ChannelWriter{&sentWriter{sent: []int64{100}}}, outCh: [][]dataflow.Channel{{ch}}}
		if merges {
			s.det = &determinant.Log{}
		}
		defer func() {
			if r := recover(); r != nil {
				f, ok := r.(failure)
				if !ok {
					panic(r)
				}
				err = f.err
			}
		}()
		s.checkNotBehind(&Promotion{Delivered: map[dataflow.Channel]int64{ch: held}})
		return nil
	}
	if err := takeOver(true, 101); !errors.Is(err, ErrBackupLost) {
		t.Fatalf("a merging standby 1 record behind its receiver: got %v, want ErrBackupLost", err)
	}
	for _, c := range []struct {
		merges bool
		held   int64
	}{{true, 100}, {true, 40}, {false, 101}} {
		if err := takeOver(c.merges, c.held); err != nil {
			t.Fatalf("merges=%v, receiver holds %d of 100 produced: %v", c.merges, c.held, err)
		}
	}
}

// A finished receiver no longer reads its gate, where batches a
// restarted sender regenerated can wait. A completed checkpoint trims
// them from the sender's backup; they must stay intact in the gate, and
// the sender's next batches must not be written into them. (Recycled at
// the trim, and again when the gate was drained, one buffer reached two
// writers: batches carried another channel's records, which a keyed
// operator found outside its key groups.)
func TestTrimLeavesBatchesAReceiverHoldsIntact(t *testing.T) {
	g := exchange.NewGate(1, 8)
	w := pairWriter(t, context.Background(), g, nil)
	b := backup.New(0)
	w.retain(b, 0)
	for i := range int64(100) {
		w.Collect(i, i)
	}
	w.Flush()
	b.Trim(0, 0, w.Sent()[0]) // the checkpoint after them completed
	for i := range int64(100) {
		w.Collect(i, 1000+i) // the sender goes on
	}
	w.Flush()

	_, e, ok := g.Poll()
	if !ok || e.Kind != exchange.Data {
		t.Fatalf("got %v %+v, want the first batch", ok, e)
	}
	var got records
	if err := NewDecoder(codec.MustFor[int64](), &got, "test").Decode(e.Buf, 0, e.Buf.N); err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 || got[0] != 0 || got[99] != 99 {
		t.Fatalf("the batch the receiver holds decodes to %d records (%v...), want records 0 to 99", len(got), got[:min(len(got), 3)])
	}
	exchange.PutBuffer(e.Buf)
	g.Drain()
}

// A barrier that comes after more records than the subtask consumed from
// its channel means records before it never arrived (a takeover that lost
// an element): the subtask fails instead of taking a snapshot that would
// not reflect them.
func TestBarrierAfterMissingRecordsFailsTheSubtask(t *testing.T) {
	e := &plan.PhysicalEdge{Source: &plan.Vertex{Chain: []*plan.Node{{Name: "events"}}}}
	rt := &Runtime{edges: []*plan.PhysicalEdge{e}, opts: Options{Checkpoint: Aligned, Now: time.Now, Host: NopHost{}}}
	s := withInput(&subtask{rt: rt, v: &plan.Vertex{}, gate: exchange.NewGate(2, 4), inChan: []dataflow.Channel{{Edge: 0, From: 1}, {Edge: 0, From: 2}}}, 2)
	if err := s.in.Restore(input.State{Counts: []int64{100, 0}}); err != nil {
		t.Fatal(err)
	}
	barrier := func(seq int64) error {
		return failed(func() { s.step(0, exchange.Element{Kind: exchange.Barrier, Checkpoint: 8, Seq: seq}) })
	}
	if err := barrier(100); err != nil {
		t.Fatalf("a barrier right after the records consumed: %v", err)
	}
	err := barrier(150)
	if !errors.Is(err, input.ErrRecordsMissing) || !strings.Contains(err.Error(), "records 100 to 149") || !strings.Contains(err.Error(), "(events)") {
		t.Fatalf("got %v, want records 100 to 149 from the subtask of \"events\" missing", err)
	}
	if err := barrier(90); !errors.Is(err, input.ErrBarrierBehind) {
		t.Fatalf("a barrier behind the records consumed: got %v, want ErrBarrierBehind", err)
	}
}
