package task

import "sync/atomic"

// Metrics are one subtask's counters. The task goroutine writes them; any
// goroutine may read them.
type Metrics struct {
	RecordsIn  atomic.Int64
	RecordsOut atomic.Int64
	BytesOut   atomic.Int64
	// Watermark is the subtask's current input watermark.
	Watermark atomic.Int64
	// Written counts records handed to sink writers.
	Written atomic.Int64
	// Skipped counts malformed records a source dropped by policy.
	Skipped atomic.Int64
}

// NewMetrics returns zeroed metrics with the watermark at MinWatermark.
func NewMetrics() *Metrics {
	m := &Metrics{}
	m.Watermark.Store(MinWatermark)
	return m
}
