package weir_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/state/lsm"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/weirtest"
)

// runningCount counts each key's records in value state and emits the
// running count.
type runningCount struct {
	n *weir.ValueState[int64, int64]
}

func (r *runningCount) Open(sc *weir.StateContext[int64]) error {
	r.n = weir.NewValueState[int64](sc, "n")
	return nil
}

func (r *runningCount) ProcessElement(ctx *weir.KeyedContext[int64, int64], v int64) error {
	n, _ := r.n.Value()
	n++
	r.n.Update(n)
	ctx.Emit(v*1_000_000 + n)
	return nil
}

// runningCountJob counts records 0 .. records-1, record i of key i mod
// keys, read at rate records per second.
func runningCountJob(records, keys int64, rate float64) weirtest.Job[int64] {
	return func(p *weir.Pipeline, sink connector.Sink[int64]) {
		src := generator.New(records, func(i int64) int64 { return i % keys }, generator.WithRate(rate))
		s := weir.FromSource(p, "keys", src, weir.SourceUID("keys"))
		counted := weir.Process(weir.KeyBy(s, func(v int64) int64 { return v }), func() weir.KeyedProcessFunction[int64, int64, int64] {
			return &runningCount{}
		}, weir.UID("count"))
		weir.To(counted, "out", sink)
	}
}

// The pebble backend under injected failures gives the memory backend's
// failure-free output, and retention leaves every file a retained
// checkpoint names and deletes older ones.
func TestPebbleBackendIsExactlyOnceUnderFailures(t *testing.T) {
	dir := t.TempDir()
	before := lsmMetrics()
	res := weirtest.Check(t, runningCountJob(300_000, 5000, 200_000), weirtest.Options[int64]{
		Guarantee: weir.ExactlyOnce, Seeds: []uint64{1, 2}, Failures: 3,
		// Failures after checkpoints completed, so that restarts restore.
		Options:      []weir.Option{weir.WithFailureWindow(300 * time.Millisecond)},
		Checkpoints:  weir.CheckpointConfig{Interval: 20 * time.Millisecond, StateDir: filepath.Join(dir, "state"), Retained: 2},
		StateBackend: weir.StateBackend{Name: "pebble", BlockCache: 8 << 20, MemTables: 8 << 20},
	})
	if res.Recoveries == 0 || res.Completed == 0 {
		t.Fatalf("%+v: no recovery from a completed checkpoint, the test proved nothing", res)
	}
	uploaded := lsmMetrics().UploadedFiles - before.UploadedFiles
	ctx := context.Background()
	blobs, err := blob.Open(ctx, filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(blobs)
	for _, job := range []string{"seed-1", "seed-2"} {
		ids, err := st.Committed(ctx, job)
		if err != nil || len(ids) == 0 {
			t.Fatalf("job %s: checkpoints %v, %v", job, ids, err)
		}
		named := map[string]bool{}
		for _, id := range ids {
			m, err := st.Load(ctx, job, id)
			if err != nil {
				t.Fatal(err)
			}
			if m.StateBackend != "pebble" {
				t.Fatalf("checkpoint %d records state backend %q", id, m.StateBackend)
			}
			for _, h := range m.Handles() {
				for _, n := range h.Shared {
					named[n] = true
				}
			}
		}
		keys, err := blobs.List(ctx, "jobs/"+job+"/shared/")
		if err != nil {
			t.Fatal(err)
		}
		present := map[string]bool{}
		for _, k := range keys {
			present[strings.TrimPrefix(k, "jobs/"+job+"/shared/")] = true
		}
		for n := range named {
			if !present[n] {
				t.Fatalf("job %s: retained checkpoints name shared file %s, which is gone", job, n)
			}
		}
		if int64(len(present)) >= uploaded {
			t.Fatalf("job %s: %d shared files remain of %d uploaded: retention deleted none", job, len(present), uploaded)
		}
	}
}

// A run that crashed restores, in the same process, from the local
// copies of its stores' files: it downloads none.
func TestPebbleBackendRecoversFromLocalFiles(t *testing.T) {
	before := lsmMetrics()
	res := weirtest.CheckCrashRestores(t, runningCountJob(300_000, 5000, 0), weirtest.Options[int64]{
		// A local directory that outlives the runs, as a worker's does.
		Seeds: []uint64{1, 2}, Failures: 1, StateBackend: weir.StateBackend{Name: "pebble", Dir: t.TempDir()},
	}, []int{2, 3})
	after := lsmMetrics()
	if res.Stopped != 2 {
		t.Fatalf("%+v: not every run crashed", res)
	}
	if after.LinkedFiles == before.LinkedFiles || after.DownloadedFiles != before.DownloadedFiles {
		t.Fatalf("restores after a crash took %d files from local copies and downloaded %d",
			after.LinkedFiles-before.LinkedFiles, after.DownloadedFiles-before.DownloadedFiles)
	}
}

func lsmMetrics() lsm.Metrics { return lsm.Totals() }

// entryCount counts each key's records per slot (record i of its key goes
// to slot i/keys mod 50) in a MapState, and emits the slot's count.
type entryCount struct {
	keys  int64
	slots *weir.MapState[int64, int64, int64]
}

func (e *entryCount) Open(sc *weir.StateContext[int64]) error {
	e.slots = weir.NewMapState[int64, int64](sc, "slots")
	return nil
}

func (e *entryCount) ProcessElement(ctx *weir.KeyedContext[int64, int64], v int64) error {
	slot := v / e.keys % 50
	n, _ := e.slots.Get(slot)
	n++
	e.slots.Put(slot, n)
	ctx.Emit(v*1_000_000 + n)
	return nil
}

// A savepoint taken while the job goes on leaves the incremental
// checkpoints as they were: the checkpoint after it, restored after a
// crash, holds the counts written before the savepoint (in a ValueState
// and in a MapState's entries) as well as after it.
func TestACheckpointAfterASavepointRestoresAfterACrash(t *testing.T) {
	job := func(p *weir.Pipeline, sink connector.Sink[int64]) {
		const keys = 500
		src := generator.New(60_000, func(i int64) int64 { return i % keys }, generator.WithRate(40_000))
		s := weir.KeyBy(weir.FromSource(p, "keys", src, weir.SourceUID("keys")), func(v int64) int64 { return v })
		counted := weir.Process(s, func() weir.KeyedProcessFunction[int64, int64, int64] { return &runningCount{} }, weir.UID("count"))
		slots := weir.Process(s, func() weir.KeyedProcessFunction[int64, int64, int64] { return &entryCount{keys: keys} }, weir.UID("slots"))
		weir.To(weir.Union(counted, weir.Map(slots, func(v int64) int64 { return -v })), "out", sink)
	}
	res := weirtest.CheckSavepointThenCrash(t, job, weirtest.Options[int64]{
		Seeds: []uint64{1, 2, 3}, Failures: 1,
		Checkpoints: weir.CheckpointConfig{Interval: 20 * time.Millisecond},
	}, []int{2, 3})
	if res.Stopped != 3 {
		t.Fatalf("%+v: not every run crashed after its savepoint", res)
	}
}
