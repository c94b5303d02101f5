package connector

// Deterministic is an optional ability of a Source: a reader opened at a
// position returns the same records, in the same order, every time (a
// generator, a file, one Kafka partition; not several partitions read as
// they arrive). The engine finds it by type assertion.
//
// Under fine-grained failover a failed source subtask whose source is
// deterministic restarts alone: it regenerates its output from the
// restored position with the same sequence numbers, and the running
// consumers drop the copies they already have. Otherwise its consumers
// restart with it.
type Deterministic interface {
	Deterministic() bool
}
