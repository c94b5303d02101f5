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
// it. The highest time seen is checkpointed, so a restored operator goes
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
	n := s.p.addNode(c, plan.Operator, 1, &eventtime.Node[T]{TS: ts, Delay: delay})
	s.p.eventTimeRole(n, stampsTime, "")
	connect(s, n, 0, plan.Forward, nil)
	r := newStream[T](s.p, n, 0)
	r.codec = s.codec
	return r
}
