package weirtest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// Deduplicate in the oracle harness. Its purpose is to make the output of
// an at-least-once input look exactly-once, so the jobs here feed it
// deliveries with duplicates: simulated redeliveries, and the real output
// of an at-least-once job that was rolled back.

// redelivered is the idx-th delivery of a generated at-least-once input:
// about a third of the deliveries are copies of one of the 20 before, with
// that record's id and event time (its position, in milliseconds).
func redelivered(idx int64) event {
	id := idx
	if r := generator.Mix(3, uint64(idx)); r%3 == 0 {
		id = max(0, idx-1-int64(r>>8%20))
	}
	return event{Key: id, Time: id}
}

const redeliveries = 20_000

// dedupJob deduplicates the generated deliveries by id within a second.
func dedupJob(p *weir.Pipeline, sink connector.Sink[event]) {
	src := generator.New(redeliveries, redelivered, generator.WithRate(100_000))
	in := weir.FromSource(p, "deliveries", src, weir.WithTimestamps(func(e event) int64 { return e.Time }, 50*time.Millisecond))
	weir.To(weir.DeduplicateBy(in, func(e event) int64 { return e.Key }, time.Second), "sink", sink)
}

// distinct returns each value of vs once.
func distinct[T comparable](vs []T) map[T]bool {
	m := map[T]bool{}
	for _, v := range vs {
		m[v] = true
	}
	return m
}

// referenceIsDistinct runs job without failures and checks that its output
// holds every distinct input record exactly once.
func referenceIsDistinct(t *testing.T, job weirtest.Job[event], input []event) {
	t.Helper()
	ref := weirtest.NewSink[event]()
	p := weir.NewPipeline(weir.WithParallelism(2))
	job(p, ref)
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, want := ref.Values(), distinct(input)
	if len(got) != len(want) || len(distinct(got)) != len(got) {
		t.Fatalf("the failure-free run wrote %d records (%d distinct), want the %d distinct inputs once each", len(got), len(distinct(got)), len(want))
	}
	for _, v := range got {
		if !want[v] {
			t.Fatalf("the failure-free run wrote %v, which is not an input", v)
		}
	}
	if len(input) == len(want) {
		t.Fatal("the input had no duplicates: the test proved nothing")
	}
}

func TestOracleDeduplicate(t *testing.T) {
	input := make([]event, redeliveries)
	for i := range input {
		input[i] = redelivered(int64(i))
	}
	referenceIsDistinct(t, dedupJob, input)
	// The reference holds each id once, so each guarantee's comparison is
	// Deduplicate's promise under it; at-most-once's (no record more often
	// than in the reference) is that no id passes twice, failures included.
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			res := weirtest.Check(t, dedupJob, weirtest.Options[event]{Guarantee: v.g, Checkpoints: v.ck, Seeds: seeds(5)})
			report(t, res)
		})
	}
}

// TestOracleDeduplicateAfterAtLeastOnceReplay chains two jobs: the first
// copies events to a plain sink at-least-once with failures, so a rollback
// writes the records after its last checkpoint twice; the second reads
// that output, duplicates and all, deduplicates it and runs exactly-once
// with failures of its own. Its output must be the first job's input, each
// record once.
func TestOracleDeduplicateAfterAtLeastOnceReplay(t *testing.T) {
	var replayed []event
	for seed := uint64(1); ; seed++ {
		got := weirtest.NewPlainSink[event]()
		p := weir.NewPipeline(weir.WithParallelism(2), weir.WithName(fmt.Sprintf("upstream-%d", seed)),
			weir.WithGuarantee(weir.AtLeastOnce), weir.WithCheckpoints(weir.CheckpointConfig{Interval: 100 * time.Millisecond}),
			weir.WithInjectedFailures(2, seed), weir.WithRestartStrategy("fixed-delay", 100, time.Millisecond, 0, 0))
		// The exchange puts the sink in a task of its own, which writes
		// whenever its input runs dry, so records reach it between
		// checkpoints.
		weir.To(weir.Rebalance(events(p, "events", 20_000, 1)), "sink", got, weir.Parallelism(1))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := p.Run(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		replayed = got.Values()
		if len(replayed) > len(distinct(replayed)) {
			t.Logf("upstream seed %d: %d failures, %d records written for 20000 events", seed, p.Report().Injected, len(replayed))
			break
		}
		if seed == 30 {
			t.Fatal("no upstream run wrote a duplicate in 30 tries")
		}
	}
	job := func(p *weir.Pipeline, sink connector.Sink[event]) {
		// The upstream output, throttled so that failures land mid-run.
		// Replayed records go back up to a rollback's worth of event time;
		// an hour of out-of-orderness and horizon covers that.
		src := generator.New(int64(len(replayed)), func(i int64) event { return replayed[i] }, generator.WithRate(100_000))
		in := weir.FromSource(p, "replayed", src, weir.WithTimestamps(func(e event) int64 { return e.Time }, time.Hour))
		weir.To(weir.DeduplicateBy(in, func(e event) int64 { return e.Time }, time.Hour), "sink", sink)
	}
	referenceIsDistinct(t, job, replayed)
	res := weirtest.Check(t, job, weirtest.Options[event]{Guarantee: weir.ExactlyOnce, Seeds: seeds(5)})
	report(t, res)
}
