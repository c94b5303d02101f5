package objstore_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/connectors/objstore"
	"github.com/weir-stream/weir/weirtest"
)

type event struct {
	ID   int64  `json:"id" parquet:"id"`
	Key  string `json:"key" parquet:"key"`
	Time int64  `json:"time" parquet:"time"` // event time, Unix milliseconds
}

func eventAt(i int64) event {
	return event{ID: i, Key: fmt.Sprintf("k%d", i%7), Time: 1_700_000_000_000 + i*60_000}
}

// runToS3 runs a job of n events into loc in format f, with failures
// injected if seed is not zero, and returns how many were injected.
func runToS3(t *testing.T, loc string, f objstore.Format[event], n int64, seed uint64, rolling objstore.RollingPolicy) int {
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
		Format:   f,
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

// readBack reads every record committed under loc, ordered by id.
func readBack(t *testing.T, loc string, f objstore.Format[event]) []event {
	t.Helper()
	got, err := connectortest.ReadAll(context.Background(), objstore.NewSource(objstore.SourceConfig[event]{Location: loc, Format: f}), 1)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got[0], func(a, b event) int { return cmp.Compare(a.ID, b.ID) })
	return got[0]
}

// The oracle for the sink: a job run exactly-once with failures injected
// at random commits to S3 exactly what the failure-free run commits, in
// each format, and leaves no upload in progress.
func TestSinkIsExactlyOnceUnderInjectedFailures(t *testing.T) {
	srv := s3Server(t)
	const n = 4000
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			ref := srv.location()
			runToS3(t, ref, f.format, n, 0, objstore.RollingPolicy{})
			want := readBack(t, ref, f.format)
			if len(want) != n {
				t.Fatalf("reference run wrote %d records, want %d", len(want), n)
			}
			injected := 0
			for _, seed := range []uint64{1, 2} {
				got := srv.location()
				injected += runToS3(t, got, f.format, n, seed, objstore.RollingPolicy{MaxFileSize: 2000})
				if records := readBack(t, got, f.format); !slices.Equal(records, want) {
					t.Fatalf("seed %d: %d records committed, want the reference's %d, exactly", seed, len(records), len(want))
				}
				noPendingUploads(t, got)
			}
			if injected == 0 {
				t.Fatal("no failure was injected: the oracle proved nothing")
			}
		})
	}
}

// sourceJob reads the objects under loc through the source, throttled so
// that checkpoints and failures fall while it reads.
func sourceJob(loc string) weirtest.Job[event] {
	return func(p *weir.Pipeline, sink connector.Sink[event]) {
		src := connector.Throttle(objstore.NewSource(objstore.SourceConfig[event]{Location: loc, Format: objstore.JSONLines[event]()}), 20000)
		weir.To(weir.FromSource(p, "objects", src), "out", sink)
	}
}

// inputObjects writes n events under a new prefix in many small part
// files and returns the prefix's location.
func inputObjects(t *testing.T, n int64) string {
	t.Helper()
	loc := s3Server(t).location()
	sink := objstore.NewSink(objstore.SinkConfig[event]{Location: loc, Format: objstore.JSONLines[event](),
		Rolling: objstore.RollingPolicy{MaxFileSize: 4000}})
	if _, err := connectortest.WriteAll(context.Background(), sink, someEvents(0, n), 3); err != nil {
		t.Fatal(err)
	}
	return loc
}

// The oracle for the source: read exactly-once with failures injected,
// its positions restored from checkpoints, it yields what the
// failure-free run does, each record once.
func TestSourceIsExactlyOnceUnderInjectedFailures(t *testing.T) {
	res := weirtest.Check(t, sourceJob(inputObjects(t, 3000)), weirtest.Options[event]{Guarantee: weir.ExactlyOnce, Seeds: []uint64{1, 2, 3}})
	if res.Injected == 0 {
		t.Fatal("no failure was injected: the oracle proved nothing")
	}
}

// Crashed and restored at another parallelism, the source's positions
// move by the hash of the object keys and the output is still the
// failure-free run's, each record once.
func TestSourceRestoresAtAnotherParallelismAfterACrash(t *testing.T) {
	seeds := []uint64{1, 2, 3}
	res := weirtest.CheckCrashRestores(t, sourceJob(inputObjects(t, 3000)), weirtest.Options[event]{Seeds: seeds}, []int{1, 3, 5})
	if res.Stopped != len(seeds) {
		t.Fatalf("%d of %d runs crashed: the oracle proved nothing", res.Stopped, len(seeds))
	}
}
