package jobs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/connectors/hybrid"
)

// withHistory returns the source of kafka-q1 with --history dir: the bids
// in the JSON-lines files of dir (its regular files, in name order; not
// its subdirectories), then live, the Kafka topic, through the hybrid
// source. History files are JSON whatever --format says: that is the
// topic's. An empty dir is an error, naming it.
func withHistory(dir string, cfg cli.JobConfig, live connector.Source[KafkaBid]) (connector.Source[KafkaBid], error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--history: %w", err)
	}
	var paths []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("--history: directory %s holds no files", dir)
	}
	slices.Sort(paths)
	history := file.JSONLines[KafkaBid](file.JSONOptions{OnMalformed: cfg.OnMalformed}, paths...)
	return hybrid.New(history, hybrid.Then(live)), nil
}
