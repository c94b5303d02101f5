package task

import (
	"context"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/standbylog"
)

// alignSubtask returns a subtask with a gate of n input channels that
// takes aligned checkpoints, and the log its active standby would follow.
func alignSubtask(n int) *subtask {
	rt := &Runtime{opts: Options{Checkpoint: Aligned, Now: time.Now, Host: NopHost{}}, cursors: [][][][]*cursor{{nil}}}
	s := &subtask{rt: rt, v: &plan.Vertex{}, ctx: context.Background(), gate: exchange.NewGate(n, 4), inChan: make([]dataflow.Channel, n), log: standbylog.New(0)}
	return withInput(s, n)
}

// withInput gives s the input protocol of n channels, and metrics.
func withInput(s *subtask, n int) *subtask {
	s.decode, s.tctx.Metrics = make([]Decoder, n), NewMetrics()
	if n > 0 {
		in, err := s.newInput(n)
		if err != nil {
			panic(err)
		}
		s.in, s.pending = in, make([]exchange.Element, n)
	}
	return s
}

// barrier hands s the barrier of checkpoint id on channel ch.
func barrier(s *subtask, ch int, id int64) {
	if _, err := s.step(ch, exchange.Element{Kind: exchange.Barrier, Checkpoint: id}); err != nil {
		panic(err)
	}
}

// A barrier of a checkpoint that was aborted, arriving after the abort
// (barriers travel with the records, the abort as a control message),
// starts no alignment: the barriers of that checkpoint that came before
// the abort were consumed already, so it could never complete, and its
// blocked channel would hold up the job until a newer barrier came
// through channels the blocked one backpressures.
func TestABarrierOfAnAbortedCheckpointStartsNoAlignment(t *testing.T) {
	s := alignSubtask(2)
	barrier(s, 0, 2)
	s.handleControl(control{kind: ctlAbort, checkpoint: 2})
	if s.in.Aligning() != 0 {
		t.Fatal("the alignment of checkpoint 2 survived its abort")
	}
	s.handleControl(control{kind: ctlAbort, checkpoint: 3}) // before any of its barriers arrived
	for _, id := range []int64{2, 3} {
		barrier(s, 1, id)
		if s.in.Aligning() != 0 {
			t.Fatalf("a barrier of aborted checkpoint %d started an alignment (waiting for %v)", id, s.describeWait())
		}
		if st := s.gate.Status(); st[1].Blocked {
			t.Fatalf("a barrier of aborted checkpoint %d blocked its channel", id)
		}
	}
	barrier(s, 1, 4)
	if s.in.Aligning() != 4 {
		t.Fatal("the barrier of checkpoint 4, after the aborted ones, started no alignment")
	}
}

// The standby of a subtask follows its primary's aborts from the log, so
// it ignores the same stale barriers: otherwise it would forward a
// barrier its primary did not, and the pair's outputs would differ.
func TestAStandbyIgnoresTheBarriersItsPrimaryIgnoredAfterAnAbort(t *testing.T) {
	p := alignSubtask(2)
	p.handleControl(control{kind: ctlAbort, checkpoint: 3})
	entries := p.log.Entries()
	sb := alignSubtask(2)
	sb.standby, sb.role, sb.log = &standby{}, standbyRole(false, false), nil
	for _, en := range entries {
		sb.applyLogged(en)
	}
	barrier(sb, 0, 3)
	if sb.in.Aligning() != 0 {
		t.Fatal("the standby aligned a barrier its primary ignored after an abort")
	}
}

// A restarted source that deferred a checkpoint's barrier until it caught
// up does not send it once that checkpoint was aborted.
func TestARestartedSourceDropsADeferredCheckpointThatWasAborted(t *testing.T) {
	s := alignSubtask(0)
	s.source, s.outs = nopSource{}, []ChannelWriter{&sentWriter{sent: []int64{10}}}
	s.catchUp = [][]int64{{20}}
	s.handleControl(control{kind: ctlTrigger, checkpoint: 5})
	s.handleControl(control{kind: ctlAbort, checkpoint: 5})
	if s.deferred != 0 {
		t.Fatalf("checkpoint 5 is still deferred after its abort")
	}
}

// A restarted source still catching up defers a drained savepoint's
// trigger with how it starts: once caught up, it advances to the final
// watermark and sends the barrier in order, as a source not restarted.
func TestARestartedSourceDefersADrainedTriggerAsDrained(t *testing.T) {
	s := alignSubtask(0)
	s.source, s.outs = nopSource{}, []ChannelWriter{&sentWriter{sent: []int64{10}}}
	s.catchUp = [][]int64{{20}}
	how := TriggerOptions{Aligned: true, Drain: true}
	s.handleControl(control{kind: ctlTrigger, checkpoint: 5, how: how})
	if s.deferred != 5 || s.deferredHow != how {
		t.Fatalf("deferred checkpoint %d triggered %+v, want 5 triggered %+v", s.deferred, s.deferredHow, how)
	}
}

// In a job of unaligned checkpoints, the barriers of a checkpoint that
// must be aligned (a savepoint's) come in order, marked MustAlign: the
// first blocks its channel until the others arrived, as in an aligned
// job, so that the snapshot holds no records in flight.
func TestAMustAlignBarrierBlocksItsChannelInAnUnalignedJob(t *testing.T) {
	s := alignSubtask(2)
	s.rt.opts.Checkpoint = Unaligned
	s = withInput(s, 2)
	mustAlign := func(ch int) {
		if _, err := s.step(ch, exchange.Element{Kind: exchange.Barrier, Checkpoint: 1, MustAlign: true}); err != nil {
			t.Fatal(err)
		}
	}
	mustAlign(0)
	if st := s.gate.Status(); !st[0].Blocked || s.in.Aligning() != 1 || s.taking != nil {
		t.Fatalf("after the first barrier: blocked %v, aligning %d, snapshot taken %v; want channel 0 blocked, no snapshot yet",
			st[0].Blocked, s.in.Aligning(), s.taking != nil)
	}
	mustAlign(1)
	if st := s.gate.Status(); st[0].Blocked || s.in.Aligning() != 0 || s.lastCheckpoint != 1 {
		t.Fatalf("after the last barrier: blocked %v, aligning %d, last checkpoint %d; want the snapshot of 1 taken, nothing blocked",
			st[0].Blocked, s.in.Aligning(), s.lastCheckpoint)
	}
}
