package weir

import (
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/operator/eventtime"
	"github.com/weir-stream/weir/internal/plan"
)

// AssignTimestamps gives every record of s the event time ts(record), in
// epoch milliseconds, and replaces the stream's watermark with one
// generated here, as Flink's assignTimestampsAndWatermarks does on any
// stream: it trails the highest event time this subtask has seen by
// maxOutOfOrderness (a record may arrive that much later than one with a
// higher time without being late), and is emitted every watermark
// interval (WithWatermarkInterval) while it rises. Watermarks from
// upstream are dropped, but for the final one when bounded input ends,
// which passes on. Use it where a source's records carry no event time
// (no WithTimestamps), or where event time is known only after a
// transformation.
//
// Each subtask generates its own watermark from the records it sees; a
// subtask that sees none holds back the watermark of the operators after
// it, unless the operator is given WithIdleness. The highest time seen is checkpointed, so a restored operator goes
// on from where it was; restored at another parallelism, a subtask that
// takes over several subtasks' state starts from the lowest of their
// times.
func AssignTimestamps[T any](s Stream[T], ts func(T) int64, maxOutOfOrderness time.Duration, os ...OpOption) Stream[T] {
	c := opts("assign-timestamps", os)
	delay := maxOutOfOrderness.Milliseconds()
	if delay < 0 {
		s.p.setErr(fmt.Errorf("operator %q: max out-of-orderness %v must not be negative", c.name, maxOutOfOrderness))
		delay = 0
	}
	idleness := c.idleness
	c.idleness = 0
	if idleness < 0 || (idleness > 0 && idleness < time.Millisecond) {
		s.p.setErr(fmt.Errorf("operator %q: idleness %v must be at least a millisecond", c.name, idleness))
		idleness = 0
	}
	n := s.p.addNode(c, plan.Operator, 1, &eventtime.Node[T]{TS: ts, Delay: delay, Idleness: idleness.Milliseconds()})
	s.p.eventTimeRole(n, stampsTime, "")
	connect(s, n, 0, plan.Forward, nil)
	r := newStream[T](s.p, n, 0)
	r.codec = s.codec
	return r
}

// WithIdleness makes the subtasks of AssignTimestamps mark themselves
// idle after they saw no record for d of processing time (they notice
// within another d), as Flink's WatermarkStrategy.withIdleness does. An
// idle subtask no longer holds back the watermark of the operators after
// it: they go on with the watermarks of the subtasks that see records.
// It becomes active again with its next record, from the watermark it
// had; records that arrive while others moved the watermark past their
// time are late downstream. While the subtask generates watermarks this
// way, the idleness of its input (WithIdleTimeout of a source before it)
// is not passed on: it goes idle itself when no record comes. d must be
// at least a millisecond; any other operator given WithIdleness fails
// the pipeline's build.
func WithIdleness(d time.Duration) OpOption { return func(c *opConfig) { c.idleness = d } }
