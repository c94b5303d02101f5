package weir_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// A job that stops making progress says what it waits on and fails the
// attempt, which the restart strategy recovers: here a Map blocks on one
// record until the report came, its source fills its queue and blocks
// sending to it, and the restarted attempt finishes with the exact output.
func TestAStalledJobReportsWhatItWaitsOnAndRestarts(t *testing.T) {
	blocked, release := make(chan struct{}), make(chan struct{})
	var blockOnce, releaseOnce sync.Once
	reports := make(chan string, 16)
	job := func(p *weir.Pipeline, sink *weirtest.Sink[int64]) {
		s := weir.FromSource(p, "numbers", generator.New(200_000, func(i int64) int64 { return i }))
		s = weir.Map(s, func(v int64) int64 {
			if v == 1000 {
				blockOnce.Do(func() {
					close(blocked)
					<-release
				})
			}
			return v
		}, weir.Name("stuck"))
		weir.To(s, "sink", sink)
	}
	sink := weirtest.NewSink[int64]()
	p := weir.NewPipeline(weir.WithParallelism(1), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond}), weir.WithChaining(false),
		weir.WithRestartStrategy("fixed-delay", 3, time.Millisecond, 0, 0),
		weir.WithStallTimeout(300*time.Millisecond, func(r string) { reports <- r }))
	job(p, sink)
	done := make(chan error, 1)
	go func() { done <- p.Run(context.Background()) }()
	<-blocked
	// Reports of pauses before the block (a loaded machine) do not count:
	// wait for the one that shows the block.
	var report string
	for report == "" {
		select {
		case r := <-reports:
			if strings.Contains(r, `(stuck): did not answer`) && strings.Contains(r, `(numbers): blocked sending to subtask 1.0 (stuck)`) {
				report = r
			}
		case err := <-done:
			t.Fatalf("the job ended (%v) without a report of the blocked Map", err)
		}
	}
	releaseOnce.Do(func() { close(release) })
	if err := <-done; err != nil {
		t.Fatalf("the job failed after the stall: %v\nreport:\n%s", err, report)
	}
	rep := p.Report()
	stalls := 0
	for _, r := range rep.Recoveries {
		if strings.Contains(r.Cause, "made no progress") {
			stalls++
		}
	}
	if stalls == 0 {
		t.Fatalf("no recovery from the stall; recoveries %+v", rep.Recoveries)
	}
	want := make([]int64, 200_000)
	for i := range want {
		want[i] = int64(i)
	}
	if err := weirtest.Equal(want, sink.Visible()); err != nil {
		t.Fatal(err)
	}
}
