package blob_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/weirtest"
)

type tick struct{ Key, Time int64 }

type countTicks struct{}

func (countTicks) Create() int64             { return 0 }
func (countTicks) Add(n int64, _ tick) int64 { return n + 1 }
func (countTicks) Merge(a, b int64) int64    { return a + b }
func (countTicks) Result(n int64) int64      { return n }

// windowedCounts counts generated events per key in tumbling event-time
// windows. The source is throttled so that checkpoints complete and
// failures land mid-run.
func windowedCounts(p *weir.Pipeline, sink connector.Sink[weir.Windowed[int64, int64]]) {
	src := generator.New(30_000, func(i int64) tick {
		return tick{Key: int64(generator.Mix(7, uint64(i)) % 25), Time: i}
	}, generator.WithRate(100_000))
	s := weir.FromSource(p, "ticks", src, weir.WithTimestamps(func(e tick) int64 { return e.Time }, 0))
	w := weir.WindowBy(weir.KeyBy(s, func(e tick) int64 { return e.Key }), weir.Tumbling(time.Second))
	weir.To(weir.AggregateWindow(w, countTicks{}), "sink", sink)
}

// TestExactlyOnceWithCheckpointsInVersityGW runs a job with checkpoints in
// the real S3-compatible server (StateDir is an s3:// URL) and failures
// injected, and checks that the output equals the failure-free output,
// that recoveries restored checkpoints from the bucket, and that another
// client finds the job's retained checkpoints there, intact.
func TestExactlyOnceWithCheckpointsInVersityGW(t *testing.T) {
	location, bucket := versityBucket(t)

	seeds := []uint64{1, 2, 3}
	restored := 0
	res := weirtest.Check(t, windowedCounts, weirtest.Options[weir.Windowed[int64, int64]]{
		Guarantee:   weir.ExactlyOnce,
		Seeds:       seeds,
		Failures:    3,
		Checkpoints: weir.CheckpointConfig{Interval: 20 * time.Millisecond, StateDir: location},
		Compare: func(ref []weir.Windowed[int64, int64], got []weirtest.Written[weir.Windowed[int64, int64]], rep *weir.Report) error {
			for _, r := range rep.Recoveries {
				if r.Restored > 0 {
					restored++
				}
			}
			return weirtest.Equal(ref, got)
		},
	})
	t.Logf("%d runs: %d failures injected, %d recoveries (%d from a checkpoint in the bucket), %d checkpoints completed",
		res.Runs, res.Injected, res.Recoveries, restored, res.Completed)
	if res.Injected == 0 || res.Completed == 0 {
		t.Fatalf("runs injected %d failures and completed %d checkpoints; the test needs both", res.Injected, res.Completed)
	}
	if restored == 0 {
		t.Errorf("no recovery restored a checkpoint (recoveries: %d); the bucket was never read back", res.Recoveries)
	}

	checkpoints := store.New(bucket)
	for _, seed := range seeds {
		job := fmt.Sprintf("seed-%d", seed) // weirtest.Check names its runs so
		m, skipped, err := checkpoints.Latest(t.Context(), job)
		if err != nil || len(skipped) > 0 {
			t.Errorf("latest checkpoint of %s in the bucket: %v (skipped %v)", job, err, skipped)
			continue
		}
		for _, h := range m.Handles() {
			if _, err := checkpoints.ReadState(t.Context(), h); err != nil {
				t.Errorf("checkpoint %d of %s: %v", m.ID, job, err)
			}
		}
	}
}

// The same under the pebble state backend: incremental checkpoints upload
// the stores' table files into the bucket's shared area, restores after
// the injected failures read them, and every shared file a retained
// checkpoint names is there, with the size its manifest gives.
func TestPebbleCheckpointsInVersityGW(t *testing.T) {
	location, bucket := versityBucket(t)
	seeds := []uint64{1, 2}
	res := weirtest.Check(t, windowedCounts, weirtest.Options[weir.Windowed[int64, int64]]{
		Guarantee: weir.ExactlyOnce, Seeds: seeds, Failures: 3,
		Checkpoints:  weir.CheckpointConfig{Interval: 20 * time.Millisecond, StateDir: location},
		StateBackend: weir.StateBackend{Name: "pebble"},
	})
	if res.Injected == 0 || res.Completed == 0 {
		t.Fatalf("runs injected %d failures and completed %d checkpoints; the test needs both", res.Injected, res.Completed)
	}
	checkpoints := store.New(bucket)
	named := 0
	for _, seed := range seeds {
		job := fmt.Sprintf("seed-%d", seed)
		ids, err := checkpoints.Committed(t.Context(), job)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			m, err := checkpoints.Load(t.Context(), job, id)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range m.Handles() {
				for _, n := range h.Shared {
					named++
					if _, err := checkpoints.Shared(job).Get(t.Context(), n); err != nil {
						t.Errorf("checkpoint %d of %s names shared file %s: %v", id, job, n, err)
					}
				}
			}
		}
	}
	if named == 0 {
		t.Fatal("no retained checkpoint names a shared file: the stores uploaded nothing to the bucket")
	}
}

// versityBucket returns the location of a fresh prefix in the real
// S3-compatible server, as a --state-dir URL, and the store on it, which
// is emptied when the test ends.
func versityBucket(t *testing.T) (string, blob.Store) {
	t.Helper()
	cfg := versity(t)
	t.Setenv("AWS_ACCESS_KEY_ID", cfg.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", cfg.SecretKey)
	location := fmt.Sprintf("s3://%s/%s?endpoint=%s", cfg.Bucket, cfg.Prefix, url.QueryEscape(cfg.Endpoint))
	bucket, err := blob.Open(t.Context(), location)
	if err != nil {
		t.Fatal(err)
	}
	emptyAtEnd(t, bucket)
	return location, bucket
}
