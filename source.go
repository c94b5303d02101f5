package weir

import (
	"time"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/operator/source"
	"github.com/weir-stream/weir/internal/plan"
)

// SourceOption configures a source.
type SourceOption[T any] func(*sourceConfig[T])

type sourceConfig[T any] struct {
	name        string
	uid         string
	parallelism int
	ts          func(T) int64
	delay       int64
}

// WithTimestamps gives every record read the event time ts(record), in
// epoch milliseconds, and makes the source emit watermarks that trail the
// highest event time seen by maxOutOfOrderness: a record may arrive that
// much later than a record with a higher timestamp without being late.
func WithTimestamps[T any](ts func(T) int64, maxOutOfOrderness time.Duration) SourceOption[T] {
	return func(s *sourceConfig[T]) {
		s.ts = ts
		s.delay = maxOutOfOrderness.Milliseconds()
	}
}

// SourceName names the source operator.
func SourceName[T any](name string) SourceOption[T] {
	return func(s *sourceConfig[T]) { s.name = name }
}

// SourceUID gives the source its identity across versions of the job,
// the key of its positions in checkpoints and savepoints (see UID).
func SourceUID[T any](uid string) SourceOption[T] {
	return func(s *sourceConfig[T]) { s.uid = uid }
}

// SourceParallelism sets the source's number of subtasks.
func SourceParallelism[T any](n int) SourceOption[T] {
	return func(s *sourceConfig[T]) { s.parallelism = n }
}

// NoTimestamp is the event time of records from a source without
// WithTimestamps. Event-time operators reject such records.
const NoTimestamp = source.NoTimestamp

// FromSource adds a source reading records of type T. Each of its subtasks
// opens the source's reader for its share of the input.
func FromSource[T any](p *Pipeline, name string, src connector.Source[T], os ...SourceOption[T]) Stream[T] {
	s := &sourceConfig[T]{name: name}
	for _, o := range os {
		o(s)
	}
	n := p.addNode(opConfig{name: s.name, uid: s.uid, parallelism: s.parallelism}, plan.Source, 1, source.New(src, s.ts, s.delay))
	if s.ts != nil {
		p.eventTimeRole(n, stampsTime, "")
	} else {
		p.eventTimeRole(n, clearsTime, "")
	}
	return newStream[T](p, n, 0)
}
