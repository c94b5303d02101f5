package weirtest_test

import (
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// assignedWindowJob reads events without event time, assigns it after the
// source (AssignTimestamps), counts per key in tumbling windows and sends
// the windows of odd keys through a side output of the window function;
// the sink gets both outputs.
func assignedWindowJob(p *weir.Pipeline, sink connector.Sink[windowCount]) {
	assignedWindowJobWith(p, sink)
}

// assignedIdleWindowJob is assignedWindowJob with an assigner given
// idleness, far longer than any pause of a run (idleness is processing
// time: a subtask gone idle for a moment could make records late, which
// no reference run could agree on): the assigner's idleness timers and
// the task following them cross the failures and restores.
func assignedIdleWindowJob(p *weir.Pipeline, sink connector.Sink[windowCount]) {
	assignedWindowJobWith(p, sink, weir.WithIdleness(time.Hour))
}

func assignedWindowJobWith(p *weir.Pipeline, sink connector.Sink[windowCount], os ...weir.OpOption) {
	src := generator.New(20_000, func(i int64) event {
		return event{Key: int64(generator.Mix(3, uint64(i)) % 40), Time: i}
	}, generator.WithRate(100_000))
	plain := weir.FromSource(p, "events", src)
	stamped := weir.AssignTimestamps(plain, func(e event) int64 { return e.Time }, 0, append(os, weir.Name("assign"))...)
	w := weir.WindowBy(weir.KeyBy(stamped, func(e event) int64 { return e.Key }), weir.Tumbling(500*time.Millisecond))
	odd := weir.NewOutputTag[windowCount]("odd")
	counts := weir.ProcessWindowWithContext(w, func(ctx *weir.WindowContext[int64, windowCount], recs []event) error {
		r := windowCount{Key: ctx.Key(), Window: ctx.Window(), Value: int64(len(recs))}
		if r.Key%2 == 1 {
			weir.Output(ctx, odd, r)
		} else {
			ctx.Emit(r)
		}
		return nil
	})
	weir.To(weir.Union(counts, weir.SideOutputOf(counts, odd)), "sink", sink)
}

func TestOracleAssignedTimestampsAndSideOutputs(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			res := weirtest.Check(t, assignedWindowJob, weirtest.Options[windowCount]{Guarantee: v.g, Checkpoints: v.ck,
				Seeds: seeds(schedulesPerJob), Compare: compareCounts(v.g)})
			report(t, res)
		})
	}
}

func TestOracleAssignedTimestampsWithIdleness(t *testing.T) {
	for _, v := range variants[:2] {
		t.Run(v.name, func(t *testing.T) {
			res := weirtest.Check(t, assignedIdleWindowJob, weirtest.Options[windowCount]{Guarantee: v.g, Checkpoints: v.ck,
				Seeds: seeds(schedulesPerJob), Compare: compareCounts(v.g)})
			report(t, res)
		})
	}
}
