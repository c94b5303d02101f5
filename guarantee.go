package weir

import "github.com/weir-stream/weir/internal/recovery"

// Guarantee is a job's recovery semantics: what its output promises when
// something fails.
type Guarantee = recovery.Guarantee

const (
	// None: no fault tolerance; a failure fails the job.
	None = recovery.None
	// ExactlyOnce (precise recovery): failures are invisible in the
	// output. State is restored from aligned checkpoints, sources rewound
	// and sinks commit with checkpoints.
	ExactlyOnce = recovery.ExactlyOnce
	// AtLeastOnce (rollback recovery): nothing is lost; records after the
	// last completed checkpoint may be reflected twice.
	AtLeastOnce = recovery.AtLeastOnce
	// AtMostOnce (gap recovery): sources are not rewound and lost state is
	// not replayed, so each input record affects the output at most once;
	// what was in flight or only in lost state is missing.
	AtMostOnce = recovery.AtMostOnce
)

// ParseGuarantee parses exactly-once, at-least-once, at-most-once or none.
func ParseGuarantee(s string) (Guarantee, error) { return recovery.ParseGuarantee(s) }

// Failover is a job's failover strategy: what restarts when a task fails.
type Failover = recovery.Failover

const (
	// GlobalFailover restarts every task of the job from the latest
	// completed checkpoint (the default).
	GlobalFailover = recovery.Global
	// FineGrainedFailover restarts only what a failure touched, from the
	// latest completed checkpoint, while the rest of the job runs on. It
	// applies to exactly-once and at-least-once jobs; others fail over
	// globally.
	//
	// In a job run in one process with aligned checkpoints it restarts
	// the failed subtask alone, with upstream backup: senders retain
	// their output until a checkpoint makes it durable at the receivers
	// and replay it to the restarted subtask, and receivers drop, by
	// per-channel sequence number, records a restarted sender regenerates.
	// When the failed subtask cannot regenerate its output record for
	// record (a keyed process function that is not a DeterministicFunction;
	// a source whose connector is not connector.Deterministic), the subtasks downstream
	// of it restart too. Tasks not downstream of the failure never
	// restart, and sources never rewind except the failed one.
	//
	// With unaligned checkpoints, and on a cluster, it restarts the failed
	// task's pipelined region (the tasks records connect it to) instead;
	// the job's other regions keep running.
	FineGrainedFailover = recovery.FineGrained
)

// ParseFailover parses global or fine-grained.
func ParseFailover(s string) (Failover, error) { return recovery.ParseFailover(s) }
