package job

import (
	"context"

	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/store"
)

// Handle is a built pipeline's engine side, as a cluster runs it (it
// implements cluster.Pipeline): weir.Pipeline.Engine returns it to weir's
// command line, which hands it to the cluster. Its zero value is not
// usable.
type Handle struct {
	compile func(ctx context.Context) (engine.Config, error)
	run     func(ctx context.Context, deploy engine.Deployer, fence store.Fence, adopt *engine.Adoption) error
	report  func() *engine.Report
	save    func(ctx context.Context, dir string, stop, drain bool) (engine.SavepointResult, error)
	rescale func(ctx context.Context, tasks map[int]int) (engine.RescaleResult, error)
}

// NewHandle returns the handle whose methods call compile, run, report,
// save and rescale.
func NewHandle(compile func(context.Context) (engine.Config, error),
	run func(context.Context, engine.Deployer, store.Fence, *engine.Adoption) error, report func() *engine.Report,
	save func(context.Context, string, bool, bool) (engine.SavepointResult, error),
	rescale func(context.Context, map[int]int) (engine.RescaleResult, error)) Handle {
	return Handle{compile: compile, run: run, report: report, save: save, rescale: rescale}
}

// RescaleLive changes the parallelism of running tasks (vertex ID to
// parallelism) without a restart, as weir.Pipeline.Rescale does
// (engine.RescaleRequest): it fails with engine.ErrNotLive when the run
// cannot, and engine.ErrNotRunning if no run is under way.
func (h Handle) RescaleLive(ctx context.Context, tasks map[int]int) (engine.RescaleResult, error) {
	return h.rescale(ctx, tasks)
}

// Compile returns the engine configuration of a run of the pipeline, as
// Compile (the function) describes it, with an unfenced store.
func (h Handle) Compile(ctx context.Context) (engine.Config, error) { return h.compile(ctx) }

// Run runs the pipeline as weir.Pipeline.Run does, with its attempts
// started by deploy and every write of the run that decides output
// passing fence's check first; with adopt, the run takes over the
// attempt that deploy holds running (engine.Config.Adopt).
func (h Handle) Run(ctx context.Context, deploy engine.Deployer, fence store.Fence, adopt *engine.Adoption) error {
	return h.run(ctx, deploy, fence, adopt)
}

// Report describes the current or latest run so far, or nil before the
// first.
func (h Handle) Report() *engine.Report { return h.report() }

// Savepoint asks the running pipeline for a savepoint under dir, with
// stop to stop after it and with drain to drain it before (which implies
// stop; engine.SavepointRequest), as weir.Pipeline.Savepoint and
// StopWithSavepoint do. It fails with engine.ErrNotRunning if no run is
// under way, and engine.ErrNoSavepoints if the run takes no checkpoints.
func (h Handle) Savepoint(ctx context.Context, dir string, stop, drain bool) (engine.SavepointResult, error) {
	return h.save(ctx, dir, stop, drain)
}
