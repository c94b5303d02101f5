package task

import (
	"sync/atomic"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
)

// This file holds a subtask's metrics: counters its goroutine writes and
// any goroutine reads, and latency histograms.

// Metrics are one subtask's counters. The task goroutine writes them; any
// goroutine may read them.
type Metrics struct {
	RecordsIn  atomic.Int64
	RecordsOut atomic.Int64
	BytesOut   atomic.Int64
	// Watermark is the subtask's current input watermark.
	Watermark atomic.Int64
	// Written counts records handed to sink writers; FirstWrite is when
	// the first of them was written, Unix nanoseconds (0: none yet).
	Written, FirstWrite atomic.Int64
	// Skipped counts malformed records a source dropped by policy.
	Skipped atomic.Int64
	// LateDropped counts records a window operator dropped because they
	// came too late for every window they belong to and it has no late
	// side output.
	LateDropped atomic.Int64
	// Duplicates counts records received again after a sender restarted
	// and dropped by sequence number; Retained is the bytes of output
	// kept for replay (upstream backup); Restarts counts restarts of this
	// subtask alone (fine-grained failover); Takeovers counts failures
	// of its primary that its active standby took over.
	Duplicates, Retained, Restarts, Takeovers atomic.Int64
	// Idle and Backpressured add up, in nanoseconds, the time the subtask
	// waited for input and the time it waited for room downstream; the
	// rest of its life it was busy.
	Idle, Backpressured atomic.Int64
	// HeldBackBy is the gate channel whose watermark is the minimum, the
	// one holding back the subtask's watermark (-1: none).
	HeldBackBy atomic.Int64
	// Started and Ended are when the subtask started and ended, Unix
	// nanoseconds (Ended 0 while it runs).
	Started, Ended atomic.Int64
	// Latency records the age of latency markers when they reach the
	// subtask (queueing and processing delay since the source).
	Latency Histogram
	// EventTimeLatency records, at sinks, wall-clock time minus the event
	// time of the records written.
	EventTimeLatency Histogram
}

// LatencyBuckets are the upper bounds of the latency histograms' buckets.
var LatencyBuckets = []time.Duration{
	100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond, 10 * time.Millisecond,
	25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond,
	500 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
	30 * time.Second, time.Minute,
}

// Histogram counts durations in LatencyBuckets; one writer, any readers.
type Histogram struct {
	counts [19]atomic.Int64 // one per bucket, the last for larger values
	sum    atomic.Int64     // nanoseconds
}

// Observe records one duration.
func (h *Histogram) Observe(d time.Duration) {
	i := 0
	for i < len(LatencyBuckets) && d > LatencyBuckets[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(int64(d))
}

// ObserveN records n durations of d.
func (h *Histogram) ObserveN(d time.Duration, n int64) {
	i := 0
	for i < len(LatencyBuckets) && d > LatencyBuckets[i] {
		i++
	}
	h.counts[i].Add(n)
	h.sum.Add(int64(d) * n)
}

// Snapshot returns the count per bucket (the last for values above every
// bound) and the sum.
func (h *Histogram) Snapshot() (counts []int64, sum time.Duration) {
	counts = make([]int64, len(h.counts))
	for i := range h.counts {
		counts[i] = h.counts[i].Load()
	}
	return counts, time.Duration(h.sum.Load())
}

// Busy returns the time the subtask was neither idle nor backpressured,
// from its start to its end (to now while it runs); 0 before it started.
func (m *Metrics) Busy(now time.Time) time.Duration {
	st := m.Started.Load()
	if st <= 0 {
		return 0
	}
	end := now
	if e := m.Ended.Load(); e > 0 {
		end = time.Unix(0, e)
	}
	return max(0, end.Sub(time.Unix(0, st))-time.Duration(m.Idle.Load())-time.Duration(m.Backpressured.Load()))
}

// NewMetrics returns zeroed metrics with the watermark at dataflow.MinWatermark.
func NewMetrics() *Metrics {
	m := &Metrics{}
	m.Watermark.Store(dataflow.MinWatermark)
	m.HeldBackBy.Store(-1)
	return m
}
