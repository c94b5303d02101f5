package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// oneSource is the plan of the executors below: one source subtask.
func oneSource() *plan.Plan {
	v := &plan.Vertex{ID: 0, Chain: []*plan.Node{{ID: 0, Name: "src", Kind: plan.Source}}, Parallelism: 1}
	return &plan.Plan{Vertices: []*plan.Vertex{v}, MaxParallelism: 128, VertexOf: []*plan.Vertex{v}}
}

// finishingExecutor runs an attempt of oneSource whose subtask finishes
// its input at once and then snapshots, for each checkpoint it is asked
// to take, the state "state of <checkpoint>" into the store, as a
// deployer's subtasks do. It records the checkpoint it restored.
type finishingExecutor struct {
	spec     AttemptSpec
	st       *store.Checkpoints
	job      string
	restored []byte // the state read from spec.Restore

	wg       sync.WaitGroup // snapshots being handed to the engine
	released chan struct{}
	killed   chan error
	once     sync.Once
}

func (x *finishingExecutor) Run(ctx context.Context) error {
	x.spec.OnFinished(dataflow.SubtaskID{})
	select {
	case <-x.released:
		return nil
	case err := <-x.killed:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (x *finishingExecutor) Kill(_ dataflow.SubtaskID, err error) {
	select {
	case x.killed <- err:
	default:
	}
}

// TriggerSubtask is called by the engine's loop, which takes the snapshot
// from OnSnapshot: hand it over from a goroutine of our own.
func (x *finishingExecutor) TriggerSubtask(sid dataflow.SubtaskID, id int64) {
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		x.spec.OnSnapshot(StoreSnapshot(context.Background(), x.st, x.job,
			task.SnapshotResult{Subtask: sid, Checkpoint: id, State: fmt.Appendf(nil, "state of %d", id)}))
	}()
}

func (x *finishingExecutor) Trigger(id int64, _ task.TriggerOptions) {
	x.TriggerSubtask(dataflow.SubtaskID{}, id)
}
func (x *finishingExecutor) Complete(int64)                           {}
func (x *finishingExecutor) Abort(int64)                              {}
func (x *finishingExecutor) Release()                                 { x.once.Do(func() { close(x.released) }) }
func (x *finishingExecutor) Written() int64                           { return 0 }
func (x *finishingExecutor) Positions() map[dataflow.SubtaskID][]byte { return nil }

// testRun runs cfg with the executors above and returns the error and
// the log. A run that does not end before the test's deadline fails the
// test with a dump of every goroutine.
func testRun(t *testing.T, cfg Config) (*Report, error, []string, []*finishingExecutor) {
	t.Helper()
	var mu sync.Mutex
	var log []string
	var executors []*finishingExecutor
	cfg.Plan, cfg.Mode, cfg.Tick, cfg.Interval, cfg.Tolerable = oneSource(), ExactlyOnce, time.Millisecond, time.Hour, -1
	cfg.Log = func(s string) { mu.Lock(); log = append(log, s); mu.Unlock() }
	cfg.Deploy = func(ctx context.Context, spec AttemptSpec) (Executor, error) {
		x := &finishingExecutor{spec: spec, st: cfg.Store, job: cfg.Job, released: make(chan struct{}), killed: make(chan error, 1)}
		if spec.Restore != nil {
			state, err := ReadState(ctx, cfg.Store, spec.Restore, cfg.Plan, nil, false)
			if err != nil {
				return nil, err
			}
			x.restored = state[dataflow.SubtaskID{}]
		}
		mu.Lock()
		executors = append(executors, x)
		mu.Unlock()
		return x, nil
	}
	type result struct {
		rep *Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := Run(context.Background(), cfg)
		done <- result{rep, err}
	}()
	var watchdog <-chan time.Time
	if d, ok := t.Deadline(); ok {
		watchdog = time.After(time.Until(d) - 5*time.Second)
	}
	select {
	case r := <-done:
		for _, x := range executors {
			x.wg.Wait()
		}
		return r.rep, r.err, log, executors
	case <-watchdog:
		pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
		t.Fatal("the run did not end; goroutines above")
		return nil, nil, nil, nil
	}
}

// A final checkpoint that cannot be stored (a full disk) fails the job,
// naming the store's error: the sinks' last transactions commit with it
// or not at all. It used to be retried forever in silence.
func TestAFailedFinalCheckpointFailsTheJobNamingTheStoreError(t *testing.T) {
	full := errors.New("no space left on device")
	blobs := blob.Faulty(blob.Memory(), blob.Plan{{Op: blob.OpPut, Prefix: "jobs/j/chk-", Action: blob.Fail(full)}})
	_, err, log, _ := testRun(t, Config{Job: "j", Store: store.New(blobs), Restart: NoRestart{}})
	if err == nil || !errors.Is(err, full) && !strings.Contains(err.Error(), full.Error()) {
		t.Fatalf("Run = %v, want the store's error", err)
	}
	if !strings.Contains(err.Error(), "the final checkpoint 1 failed") || !strings.Contains(err.Error(), "cannot commit") {
		t.Fatalf("Run = %v, want it to say the final checkpoint failed", err)
	}
	if !strings.Contains(strings.Join(log, "\n"), "checkpoint 1 failed: declined") {
		t.Fatalf("the failed checkpoint was not logged:\n%s", strings.Join(log, "\n"))
	}
}

// A flipped byte in a state blob of the checkpoint being restored (same
// size, so Latest cannot see it) makes that checkpoint unusable: the
// restore falls back to the previous checkpoint of the run, says so, and
// marks the bad one so that Latest and retention pass over it.
func TestARestoreFallsBackFromAStateBlobThatFailsItsChecksum(t *testing.T) {
	mem := blob.Memory()
	st := store.New(mem)
	twoCheckpoints(t, st)
	latest, skipped, err := st.Latest(t.Context(), "j")
	if err != nil || latest.ID != 2 || len(skipped) != 0 {
		t.Fatalf("Latest = %d, %v, %v; want checkpoint 2", latest.ID, skipped, err)
	}
	key := latest.Tasks[0].Handles[0].Key
	data, err := mem.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x20
	if err := mem.Put(t.Context(), key, data); err != nil {
		t.Fatal(err)
	}

	_, err, log, xs := testRun(t, Config{Job: "j", Store: st, Restore: &latest, Restart: NoRestart{}})
	if err != nil {
		t.Fatalf("restore of a checkpoint with a corrupt state blob: %v\n%s", err, strings.Join(log, "\n"))
	}
	if got := string(xs[0].restored); got != "state of 1" {
		t.Fatalf("restored %q, want checkpoint 1's state", got)
	}
	text := strings.Join(log, "\n")
	if !strings.Contains(text, "checkpoint 2 is unusable") || !strings.Contains(text, "checksum mismatch") || !strings.Contains(text, "restoring checkpoint 1 instead") {
		t.Fatalf("the fallback was not explained:\n%s", text)
	}
	if _, err := st.Load(t.Context(), "j", 2); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "a restore found its state corrupt") {
		t.Fatalf("Load of the corrupt checkpoint after the fallback = %v, want it marked unusable", err)
	}

	// A checkpoint the user named is not swapped for another.
	_, err, _, _ = testRun(t, Config{Job: "j", Store: st, Restore: &latest, RestoreExactly: true, Restart: NoRestart{}})
	if err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("restore of a named corrupt checkpoint = %v, want the checksum error", err)
	}
}

// twoCheckpoints runs job "j" twice into st: the first run takes only its
// final checkpoint, 1; the second restores it and takes checkpoint 2 of
// the same run.
func twoCheckpoints(t *testing.T, st *store.Checkpoints) {
	t.Helper()
	if _, err, _, _ := testRun(t, Config{Job: "j", Store: st, Run: "r1", Restart: NoRestart{}}); err != nil {
		t.Fatal(err)
	}
	first, err := st.Load(t.Context(), "j", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err, _, _ = testRun(t, Config{Job: "j", Store: st, Restore: &first, Restart: NoRestart{}}); err != nil {
		t.Fatal(err)
	}
}
