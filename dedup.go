package weir

import (
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/operator/dedup"
	"github.com/weir-stream/weir/internal/plan"
)

// Deduplicate drops repeated records of a keyed stream: the key is the
// record's identity (a record id, or a user key), and the operator forwards
// the first record of each key and drops the later ones within horizon of
// event time. It is the operator that makes the output of an at-least-once
// input (a producer that retries, a source replayed by an upstream job)
// look exactly-once; the engine's own guarantee then decides what failures
// of this job do (see docs/fault-tolerance.md, "Duplicate elimination").
//
// The contract, in event time (the input needs timestamps, see
// WithTimestamps; a record without one fails the job):
//
//   - A key is remembered from the record that was forwarded with it, at
//     event time t, until the watermark reaches t+horizon. While the key is
//     remembered, every record with it is a duplicate and is dropped; once
//     it is forgotten, the next record with the key is forwarded as a new
//     first.
//   - "First" means first to reach the key's subtask. Copies of a record
//     normally carry the same event time; for them the result does not
//     depend on arrival order or on when watermarks arrive: exactly one
//     copy is forwarded, ties between equal timestamps included (unless
//     they are late). Copies whose event times differ by horizon or more
//     may both be forwarded, depending on the watermark when the second
//     arrives.
//   - A record is late when its event time t has t+horizon <= watermark:
//     the records it would duplicate may already be forgotten, so it is
//     dropped and counted as late, or sent to the side output of
//     DedupLateTo. Input within the sources' out-of-orderness bound is
//     never late.
//   - Forwarded records keep their timestamps and their order.
//   - Under at-most-once recovery, which restarts the operator with its
//     state lost, the contract still holds: a key is forwarded at most
//     once per horizon through failures. The operator keeps one number
//     through a failure, the highest event time m it forwarded; after the
//     restart it drops every record with event time before m+horizon
//     (counted as Forgotten) until the watermark reaches m+horizon, since
//     any of them may repeat a key it forwarded and forgot. Such a failure
//     therefore loses up to a horizon of event time, the price of never
//     forwarding a key twice; under exactly-once and at-least-once the
//     state is restored instead and nothing is dropped this way.
//
// Memory: the exact state holds each remembered key once (its key and an
// int64), grouped by key group and by generation, a span of horizon/2 of
// event time; a generation is dropped whole once the watermark passes its
// end plus horizon, so a key stays in memory for between horizon and
// 1.5*horizon of watermark progress. Beside it, one Bloom filter per key
// group and live generation, sized by DedupExpectedIDs and
// DedupFalsePositiveRate, answers "certainly new" without an exact lookup;
// a "maybe" is confirmed against the exact state (as in MillWheel). The
// exact state is keyed state: checkpointed, restored and split by key
// group on rescale. The filters are not checkpointed; they are rebuilt from
// the exact state when a subtask starts from a checkpoint.
func Deduplicate[K comparable, T any](ks KeyedStream[K, T], horizon time.Duration, os ...DedupOption) Stream[T] {
	p := ks.s.p
	c := dedupConfig{op: opConfig{name: "deduplicate"}, expected: 1 << 20, fpRate: 0.01, filter: true}
	for _, o := range os {
		o.applyDedup(&c)
	}
	h := horizon.Milliseconds()
	if h <= 0 {
		p.setErr(fmt.Errorf("deduplicate: horizon %v must be at least 1ms", horizon))
		h = 1
	}
	if c.expected <= 0 || !(c.fpRate > 0 && c.fpRate < 1) {
		p.setErr(fmt.Errorf("deduplicate: expected ids %d must be positive and the false-positive rate %v in (0, 1)", c.expected, c.fpRate))
		c.expected, c.fpRate = 1<<20, 0.01
	}
	node := &dedup.Node[K, T]{Key: ks.key, Horizon: h, Width: max(1, (h+1)/2),
		Config: dedup.Config{Expected: c.expected, FPRate: c.fpRate, Filter: c.filter, Stats: c.stats.stats()}}
	n := p.addNode(c.op, plan.Operator, 2, node)
	p.eventTimeRole(n, needsTime, "event-time deduplication")
	node.Keys = connectKeyed(ks, n, 0)
	if c.late != nil {
		tag, ok := c.late.(*OutputTag[T])
		if !ok {
			p.setErr(fmt.Errorf("deduplicate: DedupLateTo's tag carries %T, not records of the stream", c.late))
		} else {
			tag.bind(p, n, 1)
		}
	}
	return newStream[T](p, n, 0)
}

// DeduplicateBy is Deduplicate of s keyed by id: KeyBy(s, id) then
// Deduplicate.
func DeduplicateBy[T any, K comparable](s Stream[T], id func(T) K, horizon time.Duration, os ...DedupOption) Stream[T] {
	return Deduplicate(KeyBy(s, id), horizon, os...)
}

// DedupOption configures Deduplicate. Name and Parallelism are
// DedupOptions too.
type DedupOption interface {
	applyDedup(*dedupConfig)
}

type dedupConfig struct {
	op       opConfig
	expected int
	fpRate   float64
	filter   bool
	late     any // *OutputTag[T]
	stats    *DedupStats
}

func (o OpOption) applyDedup(c *dedupConfig) { o(&c.op) }

type dedupOptionFunc func(*dedupConfig)

func (f dedupOptionFunc) applyDedup(c *dedupConfig) { f(c) }

// DedupExpectedIDs sizes the Bloom filters for n distinct keys per horizon
// in the whole operator (all subtasks; default 1<<20). More keys than that
// raise the filters' false-positive rate, which costs exact lookups but
// never correctness; the filters' memory stays fixed.
func DedupExpectedIDs(n int) DedupOption {
	return dedupOptionFunc(func(c *dedupConfig) { c.expected = n })
}

// DedupFalsePositiveRate sets the Bloom filters' target false-positive
// rate at the expected number of keys (default 0.01): the share of new keys
// that still need an exact lookup.
func DedupFalsePositiveRate(p float64) DedupOption {
	return dedupOptionFunc(func(c *dedupConfig) { c.fpRate = p })
}

// DedupWithoutFilter turns the Bloom-filter fast path off: every record is
// looked up in the exact state. The output is the same; it exists to
// measure what the filter saves.
func DedupWithoutFilter() DedupOption {
	return dedupOptionFunc(func(c *dedupConfig) { c.filter = false })
}

// DedupLateTo sends late records (see Deduplicate) to the side output tag
// instead of dropping them. tag must carry the stream's record type.
func DedupLateTo[T any](tag *OutputTag[T]) DedupOption {
	return dedupOptionFunc(func(c *dedupConfig) { c.late = tag })
}

// DedupStatsTo makes the operator's subtasks in this process count into s.
func DedupStatsTo(s *DedupStats) DedupOption {
	return dedupOptionFunc(func(c *dedupConfig) { c.stats = s })
}

// DedupStats collects the counters of a Deduplicate operator's subtasks
// running in this process (in cluster mode, of this worker's subtasks
// only). Counters add up over every attempt of the job, so after a restart
// they include the work done on replayed records. The zero value is ready
// to use; it is safe for concurrent use.
type DedupStats struct {
	s dedup.Stats
}

// DedupCounts is a reading of DedupStats.
type DedupCounts struct {
	// Records counts the records that reached the operator.
	Records int64 `json:"records"`
	// Forwarded, Duplicates, Late and Forgotten split Records: the records
	// passed on, the duplicates dropped, the late records dropped or sent
	// to the side output, and the records dropped after an at-most-once
	// recovery because they may repeat a key forwarded before the failure
	// (see Deduplicate).
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

// FalsePositiveRate returns the measured false-positive rate of the
// filters: the share of "maybe" answers among the lookups of keys that were
// not there (FalsePositives / (FalsePositives + FilterNegatives)), or 0
// before any.
func (c DedupCounts) FalsePositiveRate() float64 {
	if n := c.FalsePositives + c.FilterNegatives; n > 0 {
		return float64(c.FalsePositives) / float64(n)
	}
	return 0
}

// Counts returns the sum of the counters.
func (s *DedupStats) Counts() DedupCounts { return DedupCounts(s.s.Counts()) }

// stats returns the operator's counters, nil for a nil s.
func (s *DedupStats) stats() *dedup.Stats {
	if s == nil {
		return nil
	}
	return &s.s
}
