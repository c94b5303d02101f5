package cli

import (
	"math/bits"
	"time"
)

// latencyHist is a log-linear histogram of non-negative nanosecond values
// in the manner of HdrHistogram: values below 64 exactly, larger ones in
// 32 sub-buckets per power of two (a relative error under 3.2%). It does
// not allocate when it records; one writer, read after the writer is done.
type latencyHist struct {
	counts [latencyBuckets]int64
	n      int64
	max    int64
}

const latencyBuckets = 64 + 32*58 // every int64 value

func latencyIndex(v int64) int {
	if v < 64 {
		return int(max(v, 0))
	}
	shift := bits.Len64(uint64(v)) - 6
	return shift*32 + int(v>>shift)
}

// latencyUpper is the largest value of bucket i.
func latencyUpper(i int) int64 {
	if i < 64 {
		return int64(i)
	}
	shift := i/32 - 1
	return (int64(i%32+32)+1)<<shift - 1
}

func (h *latencyHist) record(v int64) {
	h.counts[latencyIndex(v)]++
	h.n++
	h.max = max(h.max, v)
}

func (h *latencyHist) merge(o *latencyHist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// quantile returns the value at quantile q (0 < q <= 1): the upper bound
// of the bucket that holds it, but no more than the largest value.
func (h *latencyHist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := max(int64(q*float64(h.n)+0.5), 1)
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(min(latencyUpper(i), h.max))
		}
	}
	return time.Duration(h.max)
}

// latencySlots are latency histograms by emit time: slot i holds the
// records emitted in [origin + i*width, origin + (i+1)*width). A slot's
// histogram is allocated when its first record comes. One writer, read
// after the writer is done.
type latencySlots struct {
	origin, width int64 // Unix nanoseconds, nanoseconds
	hs            []*latencyHist
}

// record records latency v of a record emitted at emit.
func (s *latencySlots) record(emit, v int64) {
	if emit < s.origin {
		return
	}
	i := (emit - s.origin) / s.width
	for int64(len(s.hs)) <= i {
		s.hs = append(s.hs, nil)
	}
	if s.hs[i] == nil {
		s.hs[i] = &latencyHist{}
	}
	s.hs[i].record(v)
}

// merge adds o's slots, which have the same origin and width.
func (s *latencySlots) merge(o *latencySlots) {
	for i, h := range o.hs {
		if h == nil {
			continue
		}
		for len(s.hs) <= i {
			s.hs = append(s.hs, nil)
		}
		if s.hs[i] == nil {
			s.hs[i] = &latencyHist{}
		}
		s.hs[i].merge(h)
	}
}

// slotOf returns the slot of emit time t (Unix nanoseconds), 0 before
// the origin.
func (s *latencySlots) slotOf(t int64) int {
	return int(max(t-s.origin, 0) / s.width)
}

// merged returns the merged histogram of slots [from, to).
func (s *latencySlots) merged(from, to int) *latencyHist {
	all := &latencyHist{}
	for i := max(from, 0); i < min(to, len(s.hs)); i++ {
		if s.hs[i] != nil {
			all.merge(s.hs[i])
		}
	}
	return all
}
