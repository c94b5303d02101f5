package dedup

import (
	"math"
	"sync"
	"sync/atomic"
)

// Stats collects the counters of a dedup operator's subtasks running in
// this process. Counters add up over every attempt of the job. The zero
// value is ready to use; it is safe for concurrent use.
type Stats struct {
	mu   sync.Mutex
	subs []*counters
}

// Counts is a reading of Stats; the public API shows it as
// weir.DedupCounts, a conversion of it.
type Counts struct {
	// Records counts the records that reached the operator.
	Records int64 `json:"records"`
	// Forwarded, Duplicates, Late and Forgotten split Records: the records
	// passed on, the duplicates dropped, the late records dropped or sent
	// to the side output, and the records dropped after an at-most-once
	// recovery because they may repeat a key forwarded before the failure
	// (see weir.Deduplicate).
	Forwarded  int64 `json:"forwarded"`
	Duplicates int64 `json:"duplicates"`
	Late       int64 `json:"late"`
	Forgotten  int64 `json:"forgotten"`
	// FilterNegatives counts the exact lookups avoided: a generation's
	// filter answered "certainly not there".
	FilterNegatives int64 `json:"filter_negatives"`
	// ExactLookups counts lookups in a generation's exact state (all of
	// them without the filter; with it, those the filter answered "maybe").
	ExactLookups int64 `json:"exact_lookups"`
	// FalsePositives counts exact lookups after a filter's "maybe" that
	// did not find the key.
	FalsePositives int64 `json:"false_positives"`
	// Rebuilt counts keys loaded into filters from restored state.
	Rebuilt int64 `json:"rebuilt"`
	// IDs is the number of keys held in exact state now, and FilterBits
	// the bits of the live Bloom filters (gauges over running subtasks).
	IDs        int64 `json:"ids"`
	FilterBits int64 `json:"filter_bits"`
}

// Counts returns the sum of the counters.
func (s *Stats) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	var c Counts
	for _, d := range s.subs {
		c.Forwarded += d.forwarded.Load()
		c.Duplicates += d.duplicates.Load()
		c.Late += d.late.Load()
		c.Forgotten += d.forgotten.Load()
		c.FilterNegatives += d.negatives.Load()
		c.ExactLookups += d.exact.Load()
		c.FalsePositives += d.falsePos.Load()
		c.Rebuilt += d.rebuilt.Load()
		c.IDs += d.ids.Load()
		c.FilterBits += d.bits.Load()
	}
	c.Records = c.Forwarded + c.Duplicates + c.Late + c.Forgotten
	return c
}

// counters returns new counters for one subtask; s may be nil.
func (s *Stats) counters() *counters {
	d := &counters{}
	if s != nil {
		s.mu.Lock()
		s.subs = append(s.subs, d)
		s.mu.Unlock()
	}
	return d
}

// counters are one subtask's counters: one writer, any readers.
type counters struct {
	forwarded, duplicates, late, forgotten atomic.Int64
	negatives, exact, falsePos, rebuilt    atomic.Int64
	ids, bits                              atomic.Int64
}

// bloomFalsePositiveRate is the classic estimate of a Bloom filter's
// false-positive rate with n keys in m bits and k hash functions,
// (1 - e^(-kn/m))^k.
func bloomFalsePositiveRate(n, m, k uint) float64 {
	if m == 0 {
		return 1
	}
	return math.Pow(1-math.Exp(-float64(k)*float64(n)/float64(m)), float64(k))
}
