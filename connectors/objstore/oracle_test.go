package objstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/connectors/objstore"
)

type event struct {
	ID   int64  `json:"id" parquet:"id"`
	Key  string `json:"key" parquet:"key"`
	Time int64  `json:"time" parquet:"time"` // event time, Unix milliseconds
}

func eventAt(i int64) event {
	return event{ID: i, Key: fmt.Sprintf("k%d", i%7), Time: 1_700_000_000_000 + i*60_000}
}

// runToS3 runs a job of n events into loc, with failures injected if
// seed is not zero, and returns how many were injected.
func runToS3(t *testing.T, loc string, n int64, seed uint64, rolling objstore.RollingPolicy) int {
	t.Helper()
	opts := []weir.Option{weir.WithParallelism(2)}
	if seed != 0 {
		opts = append(opts, weir.WithGuarantee(weir.ExactlyOnce),
			weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond}),
			weir.WithInjectedFailures(2, seed), weir.WithFailureWindow(60*time.Millisecond),
			weir.WithRestartStrategy("fixed-delay", 100, time.Millisecond, 0, 0))
	}
	p := weir.NewPipeline(opts...)
	src := weir.FromSource(p, "events", generator.New(n, eventAt, generator.WithRate(20000)))
	weir.To(src, "s3", objstore.NewSink(objstore.SinkConfig[event]{
		Location: loc,
		Format:   objstore.JSONLines[event](),
		Bucket:   objstore.EventTimeBuckets(func(e event) time.Time { return time.UnixMilli(e.Time) }),
		Rolling:  rolling,
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return p.Report().Injected
}

// The oracle: a job run exactly-once with failures injected at random
// commits to S3 exactly what the failure-free run commits, and leaves no
// upload in progress.
func TestSinkIsExactlyOnceUnderInjectedFailures(t *testing.T) {
	srv := s3Server(t)
	const n = 4000
	ref := srv.location()
	runToS3(t, ref, n, 0, objstore.RollingPolicy{})
	want := sorted(readLines(t, ref))
	if len(want) != n {
		t.Fatalf("reference run wrote %d lines, want %d", len(want), n)
	}
	injected := 0
	for _, seed := range []uint64{1, 2, 3} {
		got := srv.location()
		injected += runToS3(t, got, n, seed, objstore.RollingPolicy{MaxFileSize: 2000})
		if lines := sorted(readLines(t, got)); !slices.Equal(lines, want) {
			t.Fatalf("seed %d: %d lines committed, want the reference's %d, exactly", seed, len(lines), len(want))
		}
		noPendingUploads(t, got)
	}
	if injected == 0 {
		t.Fatal("no failure was injected: the oracle proved nothing")
	}
}
