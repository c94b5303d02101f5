// Package jobs holds the jobs built into the weir binary: wordcount,
// keycount, largestate, nexmark, and the Kafka, NATS and PostgreSQL jobs
// (nexmark-to-kafka, kafka-q1, keycount-nats, keycount-postgres).
// Importing the package registers them with cli.RegisterJob; cmd/weir
// does, and so can a program that wants them beside its own jobs.
package jobs

import (
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/cli/internal/builtin"
)

// register registers j as one of weir's demo jobs, which
// cli.WithoutBuiltins leaves out.
func register(j cli.Job) {
	cli.RegisterJob(j)
	builtin.MarkJob(j.Name)
}
