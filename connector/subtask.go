package connector

import "fmt"

// Validate reports whether info describes a possible subtask:
// Parallelism >= 1 and 0 <= Subtask < Parallelism. Connectors call it at the
// top of Open so that a bad SubtaskInfo fails with a clear error instead of
// an empty or overlapping split.
func (info SubtaskInfo) Validate() error {
	if info.Parallelism < 1 || info.Subtask < 0 || info.Subtask >= info.Parallelism {
		name := info.Operator
		if name == "" {
			name = "connector"
		}
		return fmt.Errorf("%s: invalid subtask %d of parallelism %d", name, info.Subtask, info.Parallelism)
	}
	return nil
}
