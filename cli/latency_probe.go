package cli

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
	Seq   int64 // source subtask << probeSeqBits | index of the record in it
	Count int64 // set by the per-key count: the key's records so far
}

// probeSeqBits is the width of a record's index in probeEvent.Seq.
const probeSeqBits = 40

// probeSource emits probeEvents until a wall-clock deadline, each stamped
// with its emit time. With a positive rate (events/s over all subtasks)
// record i of a subtask is due at start + i/rate and is stamped with that
// time, not with the time it was read: a source held back by backpressure
// thus charges the wait to the records that waited (no coordinated
// omission). The schedule's start is part of the position, so a restored
// reader keeps it too: the records due while the job recovered are
// stamped with their due times and charged the recovery. With rate 0 it
// emits as fast as it is read, stamped when read.
type probeSource struct {
	rate     float64
	keys     int64
	deadline time.Time
}

func (s probeSource) Open(_ context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[probeEvent], error) {
	r := &probeReader{src: s, rate: s.rate / float64(max(info.Parallelism, 1)), subtask: uint64(info.Subtask), start: time.Now()}
	switch len(pos) {
	case 0:
	case 16: // records keep their schedule across a restore
		r.next = int64(binary.BigEndian.Uint64(pos))
		r.start = time.Unix(0, int64(binary.BigEndian.Uint64(pos[8:])))
	default:
		return nil, fmt.Errorf("latency probe: a position of %d bytes, want 16", len(pos))
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
		buf[k] = probeEvent{Key: int64(generator.Mix(r.subtask, uint64(i)) % uint64(r.src.keys)), Emit: stamp,
			Seq: int64(r.subtask)<<probeSeqBits | i}
	}
	r.next += int64(n)
	return n, nil
}

func (r *probeReader) Position() connector.Position {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(r.next)), uint64(r.start.UnixNano()))
}

func (r *probeReader) Close() error { return nil }

// probeSink records, per subtask, now minus the emit time of every record
// emitted at or after measureFrom (the end of the warm-up), taking the
// clock once per batch. With inner set (a sink whose writers commit with
// checkpoints, connector.Committer) it writes through inner and measures a
// record when the transaction of the checkpoint that holds it committed,
// so that the latency includes the commit; without, records go nowhere
// (an idempotent sink) and are measured when first written: a record a
// restored job writes again (replayed from its checkpoint) is not
// measured again. With slotWidth set it also keeps the latencies by emit
// time, in slots of that width from measureFrom. A subtask's measurements
// carry over to its writer of the next attempt (the engine opens it after
// the failed attempt's writers are gone); histogram and slots read them
// after the job has ended.
type probeSink struct {
	inner       connector.Sink[probeEvent]
	measureFrom int64 // Unix nanoseconds
	slotWidth   time.Duration
	mu          sync.Mutex
	subtasks    map[int]*probeMeasure
}

// probeMeasure is what one sink subtask measured.
type probeMeasure struct {
	h     *latencyHist
	slots *latencySlots // nil without slotWidth
	// seen is, per source subtask, the index of the last record written
	// (records of one source subtask come in order).
	seen []int64
}

func (m *probeMeasure) record(emit, v int64) {
	m.h.record(v)
	if m.slots != nil {
		m.slots.record(emit, v)
	}
}

// first reports whether the record with sequence number seq (probeEvent.Seq)
// is written for the first time.
func (m *probeMeasure) first(seq int64) bool {
	src, i := int(seq>>probeSeqBits), seq&(1<<probeSeqBits-1)
	for len(m.seen) <= src {
		m.seen = append(m.seen, -1)
	}
	if i <= m.seen[src] {
		return false
	}
	m.seen[src] = i
	return true
}

// Idempotent reports that records written nowhere may be written again
// (connector.Idempotent), which lets an exactly-once job use the sink
// without an inner one.
func (s *probeSink) Idempotent() bool { return s.inner == nil }

func (s *probeSink) Open(ctx context.Context, info connector.SubtaskInfo) (connector.Writer[probeEvent], error) {
	s.mu.Lock()
	m := s.subtasks[info.Subtask]
	if m == nil {
		m = &probeMeasure{h: &latencyHist{}}
		if s.slotWidth > 0 {
			m.slots = &latencySlots{origin: s.measureFrom, width: int64(s.slotWidth)}
		}
		if s.subtasks == nil {
			s.subtasks = map[int]*probeMeasure{}
		}
		s.subtasks[info.Subtask] = m
	}
	s.mu.Unlock()
	w := &probeWriter{m: m, from: s.measureFrom}
	if s.inner == nil {
		return w, nil
	}
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
	return &probeCommitWriter{w}, nil
}

// histogram merges the subtasks' histograms; call it after the job ended.
func (s *probeSink) histogram() *latencyHist {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := &latencyHist{}
	for _, m := range s.subtasks {
		all.merge(m.h)
	}
	return all
}

// slots merges the subtasks' slots (empty without slotWidth); call it
// after the job ended.
func (s *probeSink) slots() *latencySlots {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := &latencySlots{origin: s.measureFrom, width: int64(max(s.slotWidth, 1))}
	for _, m := range s.subtasks {
		if m.slots != nil {
			all.merge(m.slots)
		}
	}
	return all
}

type probeWriter struct {
	m    *probeMeasure
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
			if e := &batch[i]; w.m.first(e.Seq) && e.Emit >= w.from {
				w.m.record(e.Emit, now-e.Emit)
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
			w.m.record(e, now-e)
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

var errNoProbes = errors.New("no records were measured: none emitted after the warm-up was due before the end (a rate too low for --duration, or a pipeline more than --duration behind its schedule)")
