package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/state/lsm"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// corruptOn fails every attempt that restores checkpoint bad as a
// subtask whose restored store's files failed verification does
// (task.CorruptState), and runs the others as finishingExecutor does.
type corruptOn struct {
	*finishingExecutor
	bad uint64
}

func (x corruptOn) Run(ctx context.Context) error {
	if r := x.spec.Restore; r != nil && r.ID == x.bad {
		return &task.CorruptState{Checkpoint: int64(r.ID), Err: lsm.ErrCorrupt}
	}
	return x.finishingExecutor.Run(ctx)
}

// A subtask that finds the files of the checkpoint it restores corrupt
// only when it opens its state (the pebble backend's shared files) fails
// with task.CorruptState: the engine marks that checkpoint unusable and
// restores the one before, as for a state blob that fails its checksum.
func TestASubtasksCorruptStateFallsBackToTheCheckpointBefore(t *testing.T) {
	st := store.New(blob.Memory())
	twoCheckpoints(t, st)
	latest, err := st.Load(t.Context(), "j", 2)
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	var restored []uint64
	cfg := Config{Job: "j", Store: st, Restore: &latest, Restart: NoRestart{}}
	cfg.Plan, cfg.Mode, cfg.Tick, cfg.Interval, cfg.Tolerable = oneSource(), ExactlyOnce, time.Millisecond, time.Hour, -1
	cfg.Log = func(s string) { log = append(log, s) }
	cfg.Deploy = func(ctx context.Context, spec AttemptSpec) (Executor, error) {
		if spec.Restore != nil {
			restored = append(restored, spec.Restore.ID)
		}
		x := &finishingExecutor{spec: spec, st: st, job: "j", released: make(chan struct{}), killed: make(chan error, 1)}
		return corruptOn{x, 2}, nil
	}
	if _, err := Run(t.Context(), cfg); err != nil {
		t.Fatalf("restore of a checkpoint whose subtask found its state corrupt: %v\n%s", err, strings.Join(log, "\n"))
	}
	if len(restored) != 2 || restored[0] != 2 || restored[1] != 1 {
		t.Fatalf("attempts restored checkpoints %v, want 2 and then 1", restored)
	}
	if !strings.Contains(strings.Join(log, "\n"), "checkpoint 2 is unusable") {
		t.Fatalf("the fallback was not logged:\n%s", strings.Join(log, "\n"))
	}
}
