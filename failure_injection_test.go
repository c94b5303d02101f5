package weir_test

import (
	"context"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/collection"
)

// With WithFailuresAfterACheckpoint, a kill at a random moment that is due
// before any checkpoint completed (here 1 ms into the run, checkpoints
// every 20 ms) waits for one: every recovery restores a checkpoint.
func TestKillsHeldBackUntilACheckpointCompletedRecoverFromOne(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		p := weir.NewPipeline(weir.WithParallelism(2), weir.WithGuarantee(weir.AtLeastOnce),
			weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond}),
			weir.WithInjectedFailures(1, seed), weir.WithFailureWindow(time.Millisecond),
			weir.WithFailuresAfterACheckpoint())
		src := weir.FromSource(p, "ints", connector.Throttle(collection.Of(ints(20000)...), 40000))
		out := collection.NewSink[int64]()
		weir.To(weir.Map(src, func(v int64) int64 { return v }), "sink", out)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err := p.Run(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		rep := p.Report()
		if rep.Injected != 1 || len(rep.Recoveries) == 0 {
			t.Fatalf("seed %d: %d failures injected, %d recoveries; want one of each", seed, rep.Injected, len(rep.Recoveries))
		}
		for _, r := range rep.Recoveries {
			if r.Restored == 0 {
				t.Fatalf("seed %d: a recovery started over (%s), though the kill was to wait for a completed checkpoint", seed, r.Cause)
			}
		}
	}
}
