// Package cluster runs jobs across processes: a coordinator that places
// the subtasks of each attempt on workers' slots and drives checkpoints,
// and workers that run their share of each attempt and exchange records
// over the data plane (package transport).
//
// The control plane is gRPC (pb/weir.proto). A worker holds one session
// with the coordinator; the session's end, or missing heartbeats, means
// the worker is lost, and the attempts it took part in fail and restart
// by the job's restart strategy from the latest completed checkpoint,
// placed on the workers that remain or join.
//
// Every process runs the same program: a job is Go code compiled into the
// binary, so coordinator and workers build the same pipeline from the
// job's name and arguments and check that their plans agree.
package cluster

import (
	"context"

	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/store"
)

// Program is what the binary knows about its jobs. The command line
// implements it over the registered jobs.
type Program interface {
	// Jobs lists the names of the jobs the program can run.
	Jobs() []string
	// Open builds job from its command-line arguments; name names this
	// run of it (the checkpoint store keys its checkpoints by name).
	Open(ctx context.Context, job, name string, args []string) (Pipeline, error)
}

// Pipeline is a built job.
type Pipeline interface {
	// Compile returns the engine configuration: plan, runtime options,
	// checkpoint store, and the checkpoint to restore if the arguments
	// ask for one.
	Compile(ctx context.Context) (engine.Config, error)
	// Run runs the job with its attempts started by deploy, until it
	// finishes, fails for good or ctx ends. Every write of the run that
	// decides output must pass fence's check first: the checkpoint store
	// the run uses is Compile's, fenced (store.Checkpoints.Fenced). With
	// adopt the run takes over the attempt deploy holds running instead
	// of starting one (engine.Config.Adopt).
	Run(ctx context.Context, deploy engine.Deployer, fence store.Fence, adopt *engine.Adoption) error
	// Report describes the run so far.
	Report() *engine.Report
}
