package exec

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/internal/sql/row"
)

// A side's state kept as distinct rows does not restore into the same
// side kept as a list: the restore fails before any row is processed,
// naming the operator and the state, rather than start without the
// side's rows.
func TestAJoinSideRestoredInAnotherLayoutIsRefused(t *testing.T) {
	llog, _, rlog, _ := joinInputs(9, 20000, 500, false)
	spec := JoinSpec{Kind: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2, Name: "the-join"}
	run := func(spec JoinSpec, restore string) (string, error) {
		started := make(chan struct{})
		opts := []weir.Option{weir.WithParallelism(1), weir.WithGuarantee(weir.AtLeastOnce),
			weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond}),
			weir.WithOnStart(func(weir.RunStart) error { close(started); return nil })}
		if restore != "" {
			opts = append(opts, weir.WithRestore(restore))
		}
		p := weir.NewPipeline(opts...)
		// Slow enough sources that the job is stopped in the middle.
		src := func(name string, rows []row.Row) weir.Stream[row.Row] {
			return weir.FromSource(p, name, connector.Throttle(collection.Of(rows...), 20000))
		}
		weir.To(RegularJoin(src("l", llog), src("r", rlog), spec), "sink", collection.NewSink[row.Row]())
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if restore != "" {
			return "", p.Run(ctx)
		}
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		<-started
		sp, err := p.StopWithSavepoint(ctx, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return sp.Path, <-done
	}
	path, err := run(spec, "")
	if err != nil {
		t.Fatal(err)
	}
	spec.LeftAppendOnly, spec.RightAppendOnly = true, true
	_, err = run(spec, path)
	if err == nil || !strings.Contains(err.Error(), `opening "the-join": restoring state "left"`) {
		t.Fatalf("got %v, want a refusal naming the operator and its state", err)
	}
	t.Log(err)
}

// An append-only side's lists grow while checkpoints encode them: past
// the size a table is encoded at the barrier, a key's list is appended
// to past the length a pending snapshot holds, which the snapshot encodes
// on another goroutine (the race detector's step runs this test). The
// output is the join's, and the checkpoints were incremental, so the
// table was encoded apart from the barrier.
func TestAppendOnlySideListsGrowWhileCheckpointsEncodeThem(t *testing.T) {
	// Half the rows go to four hot keys, appended to at every checkpoint
	// while the one before encodes their lists; the other half spread
	// over many keys, most of them unchanged from one checkpoint to the
	// next, so that checkpoints are incremental.
	const hot, cold, rows = 4, 8000, 300_000
	var ls, rs []row.Row
	for i := range rows {
		k := i % hot
		if i%2 == 1 {
			k = hot + i%cold
		}
		ls = append(ls, bigintRow(int64(k), int64(i)))
	}
	for k := range hot + cold {
		rs = append(rs, bigintRow(int64(k), -1))
	}
	spec := JoinSpec{Kind: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2,
		LeftAppendOnly: true, RightAppendOnly: true}
	p := weir.NewPipeline(weir.WithParallelism(1), weir.WithGuarantee(weir.AtLeastOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 5 * time.Millisecond, StateDir: t.TempDir()}))
	sink := collection.NewSink[row.Row]()
	weir.To(RegularJoin(rowSource(p, "l", ls, -1, 1), rowSource(p, "r", rs, -1, 1), spec), "sink", sink)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(sink.Records()); got != rows {
		t.Fatalf("the join emitted %d rows, want %d", got, rows)
	}
	incremental := 0
	for _, c := range p.Report().Checkpoints {
		if c.Status == "completed" && c.FullSize > c.Size {
			incremental++
		}
	}
	if incremental == 0 {
		t.Fatalf("no checkpoint of %d was incremental: the lists were never encoded apart from the barrier", len(p.Report().Checkpoints))
	}
	t.Logf("%d of %d checkpoints incremental", incremental, len(p.Report().Checkpoints))
}
