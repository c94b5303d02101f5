package weir

import (
	"fmt"
	"reflect"
	"time"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/operator/source"
	"github.com/weir-stream/weir/internal/plan"
)

// SourceOption configures a source (FromSource). The options are not
// generic, so SourceParallelism(2) or SourceName("clicks") need no type
// argument; WithTimestamps, which reads records, is typed by its function
// and FromSource checks that it matches the source's record type.
type SourceOption interface {
	applySource(*sourceConfig)
}

// sourceOptionFunc is a SourceOption that does not depend on the record
// type.
type sourceOptionFunc func(*sourceConfig)

func (f sourceOptionFunc) applySource(s *sourceConfig) { f(s) }

type sourceConfig struct {
	name        string
	uid         string
	parallelism int
	// ts is the func(T) int64 of WithTimestamps, typed when FromSource
	// checks it against the source's record type.
	ts    any
	tsArg string // the record type ts takes, for the mismatch error
	own   bool   // event times from the connector (WithSourceTimestamps)
	delay int64
}

// timestamps is WithTimestamps' option.
type timestamps[T any] struct {
	ts    func(T) int64
	delay time.Duration
}

func (t timestamps[T]) applySource(s *sourceConfig) {
	s.ts, s.tsArg, s.own, s.delay = t.ts, reflect.TypeFor[T]().String(), false, t.delay.Milliseconds()
}

// WithTimestamps gives every record read the event time ts(record), in
// epoch milliseconds, and makes the source emit watermarks that trail the
// highest event time seen by maxOutOfOrderness: a record may arrive that
// much later than a record with a higher timestamp without being late.
// T must be the source's record type: FromSource fails the pipeline's
// build (Explain, Run) with an error naming the source otherwise.
func WithTimestamps[T any](ts func(T) int64, maxOutOfOrderness time.Duration) SourceOption {
	return timestamps[T]{ts: ts, delay: maxOutOfOrderness}
}

// WithSourceTimestamps gives every record read the event time its
// connector keeps beside it, such as a Kafka record's timestamp, without
// decoding anything from the record, and makes the source emit
// watermarks that trail the highest event time seen by
// maxOutOfOrderness, as WithTimestamps does. A reader that tracks event
// time per split (a Kafka partition) holds the watermark at its slowest
// split. The connector's readers must have timestamps
// (connector.Timestamper); if they have not, the job fails at start. It
// is Flink's WatermarkStrategy.forBoundedOutOfOrderness without a
// timestamp assigner. Of WithTimestamps and WithSourceTimestamps the
// last given wins.
func WithSourceTimestamps(maxOutOfOrderness time.Duration) SourceOption {
	return sourceOptionFunc(func(s *sourceConfig) {
		s.ts, s.tsArg, s.own = nil, "", true
		s.delay = maxOutOfOrderness.Milliseconds()
	})
}

// SourceName names the source operator.
func SourceName(name string) SourceOption {
	return sourceOptionFunc(func(s *sourceConfig) { s.name = name })
}

// SourceUID gives the source its identity across versions of the job,
// the key of its positions in checkpoints and savepoints (see UID).
func SourceUID(uid string) SourceOption {
	return sourceOptionFunc(func(s *sourceConfig) { s.uid = uid })
}

// SourceParallelism sets the source's number of subtasks.
func SourceParallelism(n int) SourceOption {
	return sourceOptionFunc(func(s *sourceConfig) { s.parallelism = n })
}

// NoTimestamp is the event time of records from a source without
// WithTimestamps. Event-time operators reject such records.
const NoTimestamp = source.NoTimestamp

// FromSource adds a source reading records of type T. Each of its subtasks
// opens the source's reader for its share of the input.
func FromSource[T any](p *Pipeline, name string, src connector.Source[T], os ...SourceOption) Stream[T] {
	s := &sourceConfig{name: name}
	for _, o := range os {
		o.applySource(s)
	}
	var ts func(T) int64
	if s.ts != nil {
		var ok bool
		if ts, ok = s.ts.(func(T) int64); !ok {
			p.setErr(fmt.Errorf("source %q reads records of type %s, but its WithTimestamps function takes %s",
				s.name, reflect.TypeFor[T](), s.tsArg))
		}
	}
	impl := source.New(src, ts, s.delay)
	if s.own {
		impl = source.NewTimestamped(src, s.delay)
	}
	n := p.addNode(opConfig{name: s.name, uid: s.uid, parallelism: s.parallelism}, plan.Source, 1, impl)
	if s.ts != nil || s.own {
		p.eventTimeRole(n, stampsTime, "")
	} else {
		p.eventTimeRole(n, clearsTime, "")
	}
	return newStream[T](p, n, 0)
}
