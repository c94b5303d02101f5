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

// Counts is a reading of Stats. The public API shows it as
// weir.DedupCounts, a conversion of it, whose doc comments say what each
// counter counts; the two must keep the same fields in the same order.
type Counts struct {
	Records                                  int64
	Forwarded, Duplicates, Late, Forgotten   int64
	FilterNegatives, ExactLookups            int64
	FalsePositives, Rebuilt, IDs, FilterBits int64
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
