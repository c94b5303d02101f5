package connector

// Rescaler is an optional ability of a Source: its positions can move to
// another parallelism, so that a checkpoint taken with n subtasks of the
// source restores with m. The engine finds it by type assertion; a job
// whose source lacks it restores only at the source's old parallelism.
//
// Rescale is called once per restore at another parallelism, before any
// Open, with the positions the checkpoint holds: old[i] is old subtask i's
// (nil for one that stood at the beginning), len(old) the old
// parallelism. It returns n positions, the i-th for the reader that Open
// opens with SubtaskInfo{Subtask: i, Parallelism: n}. Together those
// readers must yield exactly the records the old readers would have
// yielded from their positions: none skipped, none twice. Their positions
// must be Rescale's input again (a job can be rescaled more than once).
//
// A source whose records carry event time in their order (a generator, a
// log) should keep each new reader's records in that order where it can:
// records a reader yields far behind its own earlier ones fall behind its
// watermark and count as late.
//
// An error means the positions cannot move (corrupt, or of a kind this
// source cannot split); the restore then fails with it.
type Rescaler interface {
	Rescale(old []Position, n int) ([]Position, error)
}
