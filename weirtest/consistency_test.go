package weirtest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// skewed unions a fast, unthrottled source with a throttled one into a
// keyed operator, so that barriers reach it at different times and records
// keep arriving on the throttled channel while it waits for the other
// barrier.
func skewed(p *weir.Pipeline, g weir.Guarantee) *weirtest.Sink[int64] {
	fast := weir.FromSource(p, "fast", generator.Sequence(0, 3_000_000))
	slow := weir.FromSource(p, "slow", generator.Sequence(10_000_000, 10_100_000, generator.WithRate(200_000)))
	keyed := weir.KeyBy(weir.Union(fast, slow), func(v int64) int64 { return v % 64 })
	out := weir.Process(keyed, func() weir.KeyedProcessFunction[int64, int64, int64] {
		return weir.ProcessFunc[int64, int64, int64](func(ctx *weir.KeyedContext[int64, int64], v int64) error {
			if v%1000 == 0 {
				ctx.Emit(v)
			}
			return nil
		})
	})
	sink := weirtest.NewSink[int64]()
	weir.To(out, "sink", sink)
	return sink
}

func runSkewed(g weir.Guarantee) error {
	p := weir.NewPipeline(weir.WithParallelism(2), weir.WithGuarantee(g),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 10 * time.Millisecond, CheckConsistency: true}))
	skewed(p, g)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return p.Run(ctx)
}

// The consistency checker holds for aligned checkpoints and catches the
// inconsistent cuts of unaligned-barrier (at-least-once) checkpoints,
// which proves it can fail.
func TestConsistencyChecker(t *testing.T) {
	if err := runSkewed(weir.ExactlyOnce); err != nil {
		t.Fatalf("aligned checkpoints: %v", err)
	}
	err := runSkewed(weir.AtLeastOnce)
	if err == nil || !strings.Contains(err.Error(), "not consistent") {
		t.Fatalf("at-least-once checkpoints: got %v, want a consistency violation", err)
	}
	t.Logf("at-least-once: %v", err)
}
