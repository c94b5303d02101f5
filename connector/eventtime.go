package connector

// EventTimer is an optional ability of a Reader whose input is made of
// splits that each carry their own event-time order, such as the
// partitions of a Kafka topic. With it the subtask's watermark follows its
// slowest split instead of the highest event time the subtask has seen,
// so a split that lags behind does not make its records late. The engine
// finds it by type assertion.
//
// When the source has event times (weir.WithTimestamps), the engine calls
// SetEventTime once, after Open and before the first Read, with the
// function that gives a record's event time in epoch milliseconds. From
// then on it asks EventTimeProgress for the reader's progress instead of
// computing the highest event time itself, and derives the watermark from
// it by subtracting the allowed out-of-orderness.
//
// EventTimeProgress returns, over the reader's active splits, the minimum
// of the highest event time read from each; a split that the reader
// considers idle (no records for a while) does not hold it back. It
// returns math.MinInt64 while nothing is known, never decreases, and is
// called from the goroutine that calls Read.
type EventTimer[T any] interface {
	SetEventTime(ts func(T) int64)
	EventTimeProgress() int64
}

// Timestamper is an optional ability of a Reader whose records carry
// their own event time in the external system, such as a Kafka record's
// timestamp, so that a job can use it without decoding it from the
// record (weir.WithSourceTimestamps). The engine finds it by type
// assertion.
//
// When the source takes its event time from the reader, the engine calls
// UseTimestamps once, after Open and before the first Read, and never
// SetEventTime. After each Read that returned n records, Timestamps
// returns their n event times in epoch milliseconds, in order; the slice
// belongs to the reader and is valid until the next Read. A reader that
// is also an EventTimer then computes EventTimeProgress from these
// times.
type Timestamper interface {
	UseTimestamps()
	Timestamps() []int64
}
