package weir

import (
	"github.com/weir-stream/weir/connector"
	sinkop "github.com/weir-stream/weir/internal/operator/sink"
	"github.com/weir-stream/weir/internal/plan"
)

// To writes the stream to a sink. Each sink subtask opens its own writer
// and hands it the records in batches.
//
// With checkpoints (exactly-once and at-least-once), a writer that
// implements connector.Committer takes part in two-phase commit; other
// writers are flushed at every checkpoint, so their output is at-least-once
// at best. An exactly-once job refuses a sink that
// is neither transactional nor idempotent rather than weaken its guarantee.
func To[T any](s Stream[T], name string, sink connector.Sink[T], os ...OpOption) {
	c := opts(name, os)
	n := s.p.addNode(c, plan.Sink, 0, sinkop.New(sink, s.p.cfg.Guarantee.Checkpoints(), s.p.cfg.Guarantee == ExactlyOnce))
	connect(s, n, 0, plan.Forward, nil)
}
