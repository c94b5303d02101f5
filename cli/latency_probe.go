package cli

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"
	"time"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
)

// probeEvent is a record of the latency benchmark: a key and the
// wall-clock time, Unix nanoseconds, the source was due to emit it.
type probeEvent struct {
	Key   int64
	Emit  int64
	Count int64 // set by the per-key count: the key's records so far
}

// probeSource emits probeEvents until a wall-clock deadline, each stamped
// with its emit time. With a positive rate (events/s over all subtasks)
// record i of a subtask is due at start + i/rate and is stamped with that
// time, not with the time it was read: a source held back by backpressure
// thus charges the wait to the records that waited (no coordinated
// omission). With rate 0 it emits as fast as it is read, stamped when read.
type probeSource struct {
	rate     float64
	keys     int64
	deadline time.Time
}

func (s probeSource) Open(_ context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[probeEvent], error) {
	r := &probeReader{src: s, rate: s.rate / float64(max(info.Parallelism, 1)), subtask: uint64(info.Subtask), start: time.Now()}
	if len(pos) == 8 {
		r.next = int64(binary.BigEndian.Uint64(pos))
		if r.rate > 0 { // records keep their schedule across a restore
			r.start = r.start.Add(-time.Duration(float64(r.next) / r.rate * float64(time.Second)))
		}
	}
	return r, nil
}

type probeReader struct {
	src     probeSource
	rate    float64 // per subtask
	subtask uint64
	start   time.Time
	next    int64 // index of the next record
	flushed bool  // the last Read returned nothing
}

// maxProbeWait is the longest a Read blocks, as the connector contract asks.
const maxProbeWait = 10 * time.Millisecond

// Read returns the records due by now, at most len(buf). When none is due
// it returns 0 at once after a Read that returned records, so that the
// engine ships them without waiting, and otherwise waits for the next
// record's time (at most maxProbeWait) first. It returns io.EOF at the
// deadline.
func (r *probeReader) Read(ctx context.Context, buf []probeEvent) (int, error) {
	now := time.Now()
	if !now.Before(r.src.deadline) {
		return 0, io.EOF
	}
	n := len(buf)
	if r.rate > 0 {
		due := int64(now.Sub(r.start).Seconds()*r.rate) + 1 - r.next
		if due <= 0 && r.flushed {
			wait := time.Duration(float64(r.next)/r.rate*float64(time.Second)) - now.Sub(r.start)
			t := time.NewTimer(min(max(wait, time.Microsecond), maxProbeWait))
			defer t.Stop()
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-t.C:
			}
			return 0, nil
		}
		if due <= 0 { // return at once: the engine ships what was read when a Read yields nothing
			r.flushed = true
			return 0, nil
		}
		r.flushed = false
		n = int(min(int64(n), due))
	}
	start, stamp := r.start.UnixNano(), now.UnixNano()
	for k := range n {
		i := r.next + int64(k)
		if r.rate > 0 {
			stamp = start + int64(float64(i)/r.rate*float64(time.Second))
		}
		buf[k] = probeEvent{Key: int64(generator.Mix(r.subtask, uint64(i)) % uint64(r.src.keys)), Emit: stamp}
	}
	r.next += int64(n)
	return n, nil
}

func (r *probeReader) Position() connector.Position {
	return binary.BigEndian.AppendUint64(nil, uint64(r.next))
}

func (r *probeReader) Close() error { return nil }

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

// probeSink records, per subtask, now minus the emit time of every record
// emitted at or after measureFrom (the end of the warm-up), taking the
// clock once per batch. With inner set (a sink whose writers commit with
// checkpoints, connector.Committer) it writes through inner and measures a
// record when the transaction of the checkpoint that holds it committed,
// so that the latency includes the commit; without, records go nowhere
// (an idempotent sink) and are measured when written. The histograms are
// read by histogram after the job has ended.
type probeSink struct {
	inner       connector.Sink[probeEvent]
	measureFrom int64 // Unix nanoseconds
	mu          sync.Mutex
	hists       []*latencyHist
}

// Idempotent reports that records written nowhere may be written again
// (connector.Idempotent), which lets an exactly-once job use the sink
// without an inner one.
func (s *probeSink) Idempotent() bool { return s.inner == nil }

func (s *probeSink) Open(ctx context.Context, info connector.SubtaskInfo) (connector.Writer[probeEvent], error) {
	w := &probeWriter{h: &latencyHist{}, from: s.measureFrom}
	if s.inner != nil {
		inner, err := s.inner.Open(ctx, info)
		if err != nil {
			return nil, err
		}
		c, ok := inner.(connector.Committer)
		if !ok {
			inner.Close()
			return nil, fmt.Errorf("latency probe: the inner sink's writer (%T) does not commit with checkpoints", inner)
		}
		w.inner, w.committer = inner, c
	}
	s.mu.Lock()
	s.hists = append(s.hists, w.h)
	s.mu.Unlock()
	if w.committer != nil {
		return &probeCommitWriter{w}, nil
	}
	return w, nil
}

// histogram merges the subtasks' histograms; call it after the job ended.
func (s *probeSink) histogram() *latencyHist {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := &latencyHist{}
	for _, h := range s.hists {
		all.merge(h)
	}
	return all
}

type probeWriter struct {
	h    *latencyHist
	from int64

	inner     connector.Writer[probeEvent] // nil: records go nowhere
	committer connector.Committer
	pending   []int64     // emit times written since the last PreCommit
	held      []heldEmits // emit times of pre-committed checkpoints
	free      [][]int64   // emptied slices, reused
}

// heldEmits are the emit times of the records of one pre-committed
// checkpoint.
type heldEmits struct {
	checkpoint int64
	emits      []int64
}

func (w *probeWriter) Write(ctx context.Context, batch []probeEvent) error {
	if w.inner == nil {
		now := time.Now().UnixNano()
		for i := range batch {
			if e := batch[i].Emit; e >= w.from {
				w.h.record(now - e)
			}
		}
		return nil
	}
	for i := range batch {
		if e := batch[i].Emit; e >= w.from {
			w.pending = append(w.pending, e)
		}
	}
	return w.inner.Write(ctx, batch)
}

func (w *probeWriter) Flush(ctx context.Context) error {
	if w.inner == nil {
		return nil
	}
	return w.inner.Flush(ctx)
}

func (w *probeWriter) Close() error {
	if w.inner == nil {
		return nil
	}
	return w.inner.Close()
}

// probeCommitWriter is a probeWriter with an inner writer that commits
// with checkpoints: it passes the two-phase commit through and measures
// the records of a checkpoint when its transaction committed.
type probeCommitWriter struct{ *probeWriter }

// PreCommit pre-commits the inner writer's transaction and holds the emit
// times written since the last one until it commits. The transaction it
// returns is the checkpoint id followed by the inner one.
func (w probeCommitWriter) PreCommit(ctx context.Context, checkpoint int64) ([]byte, error) {
	txn, err := w.committer.PreCommit(ctx, checkpoint)
	if err != nil {
		return nil, err
	}
	var next []int64
	if n := len(w.free); n > 0 {
		next, w.free = w.free[n-1], w.free[:n-1]
	}
	w.held = append(w.held, heldEmits{checkpoint, w.pending})
	w.pending = next
	return append(binary.BigEndian.AppendUint64(nil, uint64(checkpoint)), txn...), nil
}

// Commit commits the inner transaction, then records the latency of the
// records held for its checkpoint and of any held for earlier ones (whose
// transactions an aborted checkpoint left to this commit).
func (w probeCommitWriter) Commit(ctx context.Context, txn []byte) error {
	if len(txn) < 8 {
		return fmt.Errorf("latency probe: transaction of %d bytes", len(txn))
	}
	if err := w.committer.Commit(ctx, txn[8:]); err != nil {
		return err
	}
	cp := int64(binary.BigEndian.Uint64(txn))
	now := time.Now().UnixNano()
	kept := w.held[:0]
	for _, h := range w.held {
		if h.checkpoint > cp {
			kept = append(kept, h)
			continue
		}
		for _, e := range h.emits {
			w.h.record(now - e)
		}
		w.free = append(w.free, h.emits[:0])
	}
	w.held = kept
	return nil
}

// Recover recovers the inner writer with the inner transactions; records
// held from an earlier attempt are not measured.
func (w probeCommitWriter) Recover(ctx context.Context, restored int64, commit [][]byte) error {
	inner := make([][]byte, 0, len(commit))
	for _, t := range commit {
		if len(t) < 8 {
			return fmt.Errorf("latency probe: transaction of %d bytes", len(t))
		}
		inner = append(inner, t[8:])
	}
	w.held, w.pending = w.held[:0], w.pending[:0]
	return w.committer.Recover(ctx, restored, inner)
}

var errNoProbes = errors.New("no records were measured: make --duration longer or the rate higher")
