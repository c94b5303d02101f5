package task

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/plan"
)

// snapshotsTo is a Host that collects the snapshots it is told of.
type snapshotsTo struct {
	NopHost
	reports *[]SnapshotResult
}

func (h snapshotsTo) SnapshotTaken(r SnapshotResult) { *h.reports = append(*h.reports, r) }

// catchingUpSubtask returns a subtask (not a source) with a gate of two
// aligned input channels and one output channel to subtask 0 of
// "per-bucket", on which it has sent sent records of the want its
// previous incarnation had, and the snapshots it reports.
func catchingUpSubtask(sent, want int64) (*subtask, *[]SnapshotResult) {
	var reports []SnapshotResult
	s := alignSubtask(2)
	s.rt.opts.Host = snapshotsTo{reports: &reports}
	target := &plan.Vertex{ID: 2, Parallelism: 1, Chain: []*plan.Node{{Name: "per-bucket"}}}
	s.v = &plan.Vertex{ID: 1, Outputs: []*plan.PhysicalEdge{{Target: target, Partitioning: plan.Hash}}}
	s.outs = []ChannelWriter{&sentWriter{sent: []int64{sent}}}
	s.catchUp = [][]int64{{want}}
	return s, &reports
}

// A subtask restarted alone whose receiver holds more of its previous
// incarnation's output than it has regenerated must not take a snapshot:
// the receiver's would reflect records its own does not, and the
// checkpoint would not be a consistent cut. (Seen as "checkpoint 6 is not
// consistent: on edge 1 from subtask 1 to 0 the sender had sent 12303
// records before its snapshot but the receiver's snapshot reflects 26776":
// a window restarted alone had consumed all its input again, but its
// watermark lagged behind the one its previous incarnation fired on.) It
// cannot wait at the barriers either, as what it still has to send may
// come behind them, so it declines, forwards no barrier, and reads on.
func TestARestartedSubtaskThatHasNotCaughtUpDeclinesTheCheckpoint(t *testing.T) {
	s, reports := catchingUpSubtask(12303, 26776)
	barrier(s, 0, 6) // the sentWriter panics if a barrier is forwarded
	barrier(s, 1, 6)
	if len(*reports) != 1 {
		t.Fatalf("got %d snapshot reports, want 1 decline", len(*reports))
	}
	err := (*reports)[0].Err
	if !errors.Is(err, ErrCatchingUp) || !strings.Contains(err.Error(), `12303 of the 26776 records its previous incarnation sent to subtask 0 of "per-bucket"`) {
		t.Fatalf("got %v, want a decline for catching up that says how far", err)
	}
	if s.in.Aligning() != 0 {
		t.Fatal("the declined checkpoint's alignment goes on")
	}
	for c, st := range s.gate.Status() {
		if st.Blocked {
			t.Fatalf("input channel %d stays blocked after the decline", c)
		}
	}
	barrier(s, 0, 6) // a late one of the declined checkpoint
	if s.in.Aligning() != 0 {
		t.Fatal("a barrier of the declined checkpoint started an alignment")
	}
}

// A restarted subtask that finished without sending what its previous
// incarnation had did not regenerate its output: its replay was not
// deterministic, and no restart alone can make the receiver's state
// right, so it fails (the job falls back to a global rollback).
func TestARestartedSubtaskThatFinishedBehindIsNotDeterministic(t *testing.T) {
	// A finished subtask snapshots when the job triggers it directly; only
	// sources defer a trigger until they caught up (it would never be
	// taken here, and the final checkpoint would wait for it forever).
	s, _ := catchingUpSubtask(100, 120)
	s.outs = []ChannelWriter{&endWriter{sentWriter{sent: []int64{100}}}}
	s.rt.finished = map[dataflow.SubtaskID]bool{}
	for ch := range 2 {
		if _, err := s.step(ch, exchange.Element{Kind: exchange.End}); err != nil {
			t.Fatal(err)
		}
	}
	if !s.finished {
		t.Fatal("the subtask did not finish at the end of its inputs")
	}
	err := failed(func() { s.handleControl(control{kind: ctlTrigger, checkpoint: 8}) })
	if !errors.Is(err, ErrNotDeterministic) {
		t.Fatalf("a trigger at a finished subtask behind its previous incarnation: got %v (deferred %d), want ErrNotDeterministic", err, s.deferred)
	}
}

// What a restarted subtask must catch up with excludes the channels to
// receivers restarted with it: they restore the checkpoint's counts too.
func TestCatchUpExcludesReceiversRestartedWithTheSubtask(t *testing.T) {
	sink := &plan.Vertex{ID: 2, Parallelism: 2}
	fwd := &plan.Vertex{ID: 3, Parallelism: 2}
	v := &plan.Vertex{ID: 1, Outputs: []*plan.PhysicalEdge{{Target: sink, Partitioning: plan.Hash}, {Target: fwd, Partitioning: plan.Forward}}}
	r := &Runtime{}
	sent := [][]int64{{50, 60}, {70}}
	got := r.catchUpTarget(v, 1, sent, map[dataflow.SubtaskID]bool{{Vertex: 1, Subtask: 1}: true, {Vertex: 2, Subtask: 0}: true})
	if want := [][]int64{{0, 60}, {70}}; !equalCounts(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := r.catchUpTarget(v, 1, sent, map[dataflow.SubtaskID]bool{{Vertex: 2, Subtask: 0}: true, {Vertex: 2, Subtask: 1}: true, {Vertex: 3, Subtask: 1}: true}); got != nil {
		t.Fatalf("with every receiver restarting: got %v, want nothing to catch up", got)
	}
	if want := [][]int64{{50, 60}, {0}}; !equalCounts(r.catchUpTarget(v, 1, sent, map[dataflow.SubtaskID]bool{{Vertex: 3, Subtask: 1}: true}), want) {
		t.Fatalf("a forward receiver restarting: got %v, want %v", r.catchUpTarget(v, 1, sent, map[dataflow.SubtaskID]bool{{Vertex: 3, Subtask: 1}: true}), want)
	}
}

func equalCounts(a, b [][]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

// An aligned checkpoint that switches to unaligned after the aligned
// timeout and then cannot take its snapshot (here: declined while
// catching up) unblocks the channels its alignment had blocked.
func TestAFailedSwitchToUnalignedUnblocksTheChannels(t *testing.T) {
	s, reports := catchingUpSubtask(10, 20)
	s.rt.opts.AlignedTimeout = time.Nanosecond
	barrier(s, 0, 3)
	if !s.gate.Status()[0].Blocked {
		t.Fatal("the aligned barrier did not block its channel")
	}
	s.checkAlignedTimeout()
	if len(*reports) != 1 || !errors.Is((*reports)[0].Err, ErrCatchingUp) {
		t.Fatalf("got reports %+v, want one decline", *reports)
	}
	if s.in.Aligning() != 0 || s.gate.Status()[0].Blocked {
		t.Fatalf("after the failed switch: alignment %v, channel 0 blocked %v; want neither", s.in.Aligning(), s.gate.Status()[0].Blocked)
	}
}

// endWriter is a sentWriter that takes the watermark and the end a
// finishing subtask sends.
type endWriter struct{ sentWriter }

func (w *endWriter) Emit(exchange.Element) {}
func (w *endWriter) Flush()                {}
