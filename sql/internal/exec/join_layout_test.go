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
