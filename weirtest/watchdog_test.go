package weirtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// stuckSink blocks every write until the job stops it.
type stuckSink struct{}

func (s stuckSink) Open(context.Context, connector.SubtaskInfo) (connector.Writer[int64], error) {
	return s, nil
}

func (s stuckSink) Write(ctx context.Context, _ []int64) error {
	<-ctx.Done()
	return ctx.Err()
}

func (stuckSink) Flush(context.Context) error { return nil }
func (stuckSink) Close() error                { return nil }

// A watched run that stops making progress ends with ErrHung, the job's
// report of what each subtask waits on and the stacks of all goroutines,
// instead of waiting for go test's timeout.
func TestWatchdogStopsAHungRunWithWhoWaitsOnWhom(t *testing.T) {
	w := weirtest.NewWatchdog(300 * time.Millisecond)
	p := weir.NewPipeline(weir.WithParallelism(1), weir.WithChaining(false), weir.WithGuarantee(weir.AtLeastOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond}), w.Option())
	weir.To(weir.FromSource(p, "numbers", generator.New(1_000_000, func(i int64) int64 { return i })), "stuck", connector.Sink[int64](stuckSink{}))
	err := w.Run(context.Background(), p, 10*time.Minute)
	if !errors.Is(err, weirtest.ErrHung) {
		t.Fatalf("got %v, want ErrHung", err)
	}
	for _, want := range []string{
		"(numbers): blocked sending to subtask 1.0 (stuck)", // the job's view
		"(stuck): did not answer",
		"weirtest_test.stuckSink.Write", // every goroutine's stack
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
}
