// Package jobs holds the jobs built into the weir binary: wordcount,
// keycount, largestate, nexmark, and the Kafka, NATS and PostgreSQL jobs
// (nexmark-to-kafka, kafka-q1, keycount-nats, keycount-postgres).
// Importing the package registers them with cli.RegisterJob; cmd/weir
// does, and so can a program that wants them beside its own jobs.
package jobs

import (
	"strings"

	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/connectors/objstore"
	"github.com/weir-stream/weir/connectors/stdout"
)

// output returns the sink for --output: standard output for "-", a
// directory of JSON-lines part files otherwise.
func output[T any](cfg cli.JobConfig) connector.Sink[T] {
	if cfg.Output == "-" || cfg.Output == "" {
		if cfg.Stdout != nil {
			return stdout.To[T](cfg.Stdout)
		}
		return stdout.JSON[T]()
	}
	if strings.HasPrefix(cfg.Output, "s3://") {
		return objstore.NewSink(objstore.SinkConfig[T]{Location: cfg.Output, Format: objstore.JSONLines[T]()})
	}
	return file.JSONSink[T](cfg.Output)
}
