// Package hook lets weir's own internal packages reach the parts of a
// *weir.Pipeline that its public API does not show: its compiled engine
// configuration, and running its attempts on a cluster. Package weir sets
// the functions in its init; they take the pipeline as any because this
// package cannot import weir.
package hook

import (
	"context"

	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/store"
)

var (
	// Compile returns the engine configuration of a *weir.Pipeline: its
	// plan, runtime options, checkpoint store and the checkpoint it
	// restores.
	Compile func(ctx context.Context, p any) (engine.Config, error)
	// SetDeployer makes a *weir.Pipeline start its attempts through d.
	SetDeployer func(p any, d engine.Deployer)
	// SetFence makes every write of a *weir.Pipeline's runs that decides
	// output (checkpoint completion, deletion of checkpoints) pass f's
	// check first (store.Checkpoints.Fenced).
	SetFence func(p any, f store.Fence)
)
