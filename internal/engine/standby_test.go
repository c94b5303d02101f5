package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/plan"
)

// Active standby where subtasks cannot restart alone (a cluster whose
// executors cannot, unaligned checkpoints) is refused before anything
// runs, not silently dropped.
func TestActiveStandbyIsRefusedWhereSubtasksCannotRestartAlone(t *testing.T) {
	deploy := func(context.Context, AttemptSpec) (Executor, error) {
		t.Fatal("an attempt was deployed")
		return nil, nil
	}
	for name, cfg := range map[string]Config{
		"executors that cannot restart subtasks": {Deploy: deploy},
		"unaligned checkpoints":                  {Deploy: deploy, SubtaskRestarts: true, Unaligned: true},
	} {
		cfg.Plan, cfg.Mode, cfg.Failover, cfg.ActiveStandby = &plan.Plan{}, ExactlyOnce, FineGrained, true
		_, err := Run(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), "active standby needs fine-grained failover and aligned checkpoints") {
			t.Fatalf("%s: got %v, want active standby refused", name, err)
		}
	}
}
