package dedup

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/weir-stream/weir/internal/task"
)

// The false-positive rate of a Bloom filter with n keys in m bits and k
// hash functions is about (1 - e^(-kn/m))^k. These tests measure it, with
// keys fed to the filter as Deduplicate feeds them (locations derived from
// the key hash) and, for comparison, through the library's own hashing
// (murmur3 of the key's bytes), and check that the measurement agrees with the formula
// within a statistical tolerance: the measured rate over q queries has
// standard deviation sqrt(p(1-p)/q); we allow four of them plus 5% of p
// for the formula's own approximation (it treats the k bits of a key as
// independent). The inputs are fixed, so the result is too.

func hashInput(i int64) []byte {
	return binary.LittleEndian.AppendUint64(nil, task.HashUint64(uint64(i)))
}

// within reports whether measured agrees with predicted for q trials, and
// the allowed difference.
func within(measured, predicted float64, q float64) (bool, float64) {
	tol := 4*math.Sqrt(predicted*(1-predicted)/q) + 0.05*predicted
	return math.Abs(measured-predicted) <= tol, tol
}

func TestBloomFalsePositiveRateMatchesFormula(t *testing.T) {
	m01, k01 := bloom.EstimateParameters(10_000, 0.01)
	cases := []struct{ n, m, k uint }{
		{10_000, m01, k01},   // sized for 1% at 10,000 keys
		{10_000, 1 << 16, 3}, // 6.6 bits per key, fewer hashes
		{2_000, 1 << 14, 5},  // a small filter
		{20_000, m01, k01},   // twice the keys it was sized for
		{4096, 39_263, 7},    // one key group's filter at Deduplicate's defaults
	}
	const q = 400_000
	for _, c := range cases {
		t.Run(fmt.Sprintf("n=%d,m=%d,k=%d", c.n, c.m, c.k), func(t *testing.T) {
			locs := make([]uint64, c.k)
			for _, scheme := range []struct {
				name string
				add  func(*bloom.BloomFilter, int64)
				test func(*bloom.BloomFilter, int64) bool
			}{
				{"operator", func(f *bloom.BloomFilter, i int64) {
					filterLocations(locs, task.HashUint64(uint64(i)))
					filterAdd(f, locs)
				}, func(f *bloom.BloomFilter, i int64) bool {
					filterLocations(locs, task.HashUint64(uint64(i)))
					return f.TestLocations(locs)
				}},
				{"library", func(f *bloom.BloomFilter, i int64) { f.Add(hashInput(i)) },
					func(f *bloom.BloomFilter, i int64) bool { return f.Test(hashInput(i)) }},
			} {
				f := bloom.New(c.m, c.k)
				for i := range int64(c.n) {
					scheme.add(f, i)
				}
				fp := 0
				for i := range int64(q) {
					if scheme.test(f, int64(c.n)+i) {
						fp++
					}
				}
				measured, predicted := float64(fp)/q, bloomFalsePositiveRate(c.n, c.m, c.k)
				ok, tol := within(measured, predicted, q)
				t.Logf("%s hashing: measured %.5f, formula %.5f (tolerance ±%.5f)", scheme.name, measured, predicted, tol)
				if !ok {
					t.Fatalf("%s hashing: measured false-positive rate %.5f, formula %.5f: off by more than %.5f", scheme.name, measured, predicted, tol)
				}
			}
		})
	}
}

// TestDedupFalsePositivesMatchFormula measures the rate inside the
// operator: one key group and one generation, n0 keys first, then q new
// keys, each tested against the filter and then added to it. The j-th new
// key meets a filter holding n0+j keys, so the expected count of false
// positives is the sum of the formula over those fills.
func TestDedupFalsePositivesMatchFormula(t *testing.T) {
	const n0, q = 2000, 6000
	stats := &Stats{}
	d := newTestDedup(t, dedupOpts{horizon: 1 << 40, filter: true, expected: 8000, fpRate: 0.01, maxPar: 1, kgEnd: 1, stats: stats})
	for i := range int64(n0 + q) {
		d.op.Collect(i, dupRec{i, i})
	}
	d.op.publish()
	c := stats.Counts()
	// The first key finds no generation yet, so no filter to test.
	if c.Forwarded != n0+q || c.FilterNegatives+c.FalsePositives != n0+q-1 {
		t.Fatalf("counts %+v: want every key but the first forwarded after one filter test", c)
	}
	var sum, variance float64
	for j := range uint(q) {
		p := bloomFalsePositiveRate(n0+j, d.op.m, d.op.k)
		sum += p
		variance += p * (1 - p)
	}
	var before int64 // false positives among the first n0 keys
	{
		r := newTestDedup(t, dedupOpts{horizon: 1 << 40, filter: true, expected: 8000, fpRate: 0.01, maxPar: 1, kgEnd: 1, stats: &Stats{}})
		for i := range int64(n0) {
			r.op.Collect(i, dupRec{i, i})
		}
		before = r.op.n.falsePos
	}
	measured := float64(c.FalsePositives - before)
	tol := 4*math.Sqrt(variance) + 0.05*sum
	t.Logf("m=%d k=%d: %0.f false positives among %d new keys at fills %d..%d, formula %.1f (tolerance ±%.1f); rate %.5f",
		d.op.m, d.op.k, measured, q, n0, n0+q, sum, tol, measured/q)
	if math.Abs(measured-sum) > tol {
		t.Fatalf("measured %0.f false positives, formula %.1f: off by more than %.1f", measured, sum, tol)
	}
}
