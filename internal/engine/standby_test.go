package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/plan"
)

// Active standby on a cluster is refused before anything runs, not
// silently dropped.
func TestActiveStandbyOnAClusterIsRefused(t *testing.T) {
	cfg := Config{Plan: &plan.Plan{}, Mode: ExactlyOnce, Failover: FineGrained, ActiveStandby: true,
		Deploy: func(context.Context, AttemptSpec) (Executor, error) {
			t.Fatal("an attempt was deployed")
			return nil, nil
		}}
	_, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "active standby runs in one process only") {
		t.Fatalf("got %v, want active standby refused on a cluster", err)
	}
}
