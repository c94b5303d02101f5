package kafka

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-stream/weir/connector"
)

// Record is a Kafka record whose value is decoded into a T, with the
// metadata Kafka keeps beside the value: what RecordSource yields, as a
// Flink KafkaRecordDeserializationSchema or a franz-go consumer sees it.
type Record[T any] struct {
	Topic     string
	Partition int32
	Offset    int64
	// Timestamp is the record's Kafka timestamp: the producer's create
	// time, or the broker's append time for a topic with
	// message.timestamp.type=LogAppendTime.
	Timestamp time.Time
	// Key is the record's key as written, nil for a record without one.
	Key []byte
	// Value is the decoded value; the zero T for a tombstone.
	Value T
	// Tombstone reports a record with a null value: in a compacted topic,
	// the deletion of Key. Its value is not decoded and is never
	// malformed.
	Tombstone bool
	Headers   []Header
}

// EventTime returns the record's Kafka timestamp in epoch milliseconds.
// As a method expression it is the event-time function of a record
// source: weir.WithTimestamps(kafka.Record[T].EventTime, delay).
func (r Record[T]) EventTime() int64 { return r.Timestamp.UnixMilli() }

// RecordSource returns a source like Source that yields whole records:
// the value decoded by opts.Format (or opts.Decode, which sees the Kafka
// record too) with its topic, partition, offset, timestamp, key and
// headers. A record with a null value (a tombstone) comes as a Record
// with Tombstone set, not decoded; opts.SkipTombstones drops such
// records instead. Every other option means what it means for Source,
// and a value that does not decode is malformed alike.
func RecordSource[T any](opts SourceOptions[T]) (connector.Source[Record[T]], error) {
	if _, err := Source(opts); err != nil { // the same checks
		return nil, err
	}
	decode := opts.Decode
	if decode == nil {
		f := opts.Format
		decode = func(rec *kgo.Record, v *T) error { return f.Decode(rec.Value, v) }
	}
	return Source(withDecode(opts, func(rec *kgo.Record, r *Record[T]) error {
		r.Topic, r.Partition, r.Offset, r.Timestamp = rec.Topic, rec.Partition, rec.Offset, rec.Timestamp
		r.Key = cloneBytes(rec.Key)
		r.Headers = nil
		if len(rec.Headers) > 0 {
			r.Headers = make([]Header, len(rec.Headers))
			for i, h := range rec.Headers {
				r.Headers[i] = Header{Key: h.Key, Value: cloneBytes(h.Value)}
			}
		}
		if rec.Value == nil {
			r.Tombstone = true
			return nil
		}
		return decode(rec, &r.Value)
	}))
}

// cloneBytes copies b, keeping nil apart from empty: a record does not
// retain the fetch buffer it was read from.
func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// withDecode returns opts for records of type U decoded by decode, every
// other option as in o.
func withDecode[T, U any](o SourceOptions[T], decode func(*kgo.Record, *U) error) SourceOptions[U] {
	return SourceOptions[U]{
		Brokers:              o.Brokers,
		Topics:               o.Topics,
		Decode:               decode,
		Start:                o.Start,
		StartTime:            o.StartTime,
		Group:                o.Group,
		CommitOffsets:        o.CommitOffsets,
		ReadUncommitted:      o.ReadUncommitted,
		OnMalformed:          o.OnMalformed,
		DeadLetterTopic:      o.DeadLetterTopic,
		Malformed:            o.Malformed,
		SkipTombstones:       o.SkipTombstones,
		Bounded:              o.Bounded,
		DiscoveryInterval:    o.DiscoveryInterval,
		PartitionIdleTimeout: o.PartitionIdleTimeout,
		ConnectTimeout:       o.ConnectTimeout,
		ClientOptions:        o.ClientOptions,
	}
}
