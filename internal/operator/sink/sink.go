// Package sink implements the sink operator: each subtask opens the
// connector's writer and hands it the records in batches of up to 1024.
// With checkpoints, a writer that implements connector.Committer takes
// part in two-phase commit (pre-commit at the barrier, commit when the
// checkpoint completes, pending transactions in the snapshot); other
// writers are flushed at every checkpoint. Under exactly-once a writer
// that neither commits nor is idempotent fails the task for good.
package sink

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/task"
)

// New returns the node writing to sink. checkpoints says whether the job
// takes checkpoints, exactlyOnce whether its guarantee is exactly-once.
func New[T any](sink connector.Sink[T], checkpoints, exactlyOnce bool) task.NodeImpl {
	return &node[T]{sink: sink, checkpoints: checkpoints, exactlyOnce: exactlyOnce}
}

type node[T any] struct {
	sink                     connector.Sink[T]
	checkpoints, exactlyOnce bool
}

func (s *node[T]) Build(*task.Context, []any) (task.Built, error) {
	op := &op[T]{sink: s.sink, batch: make([]T, 0, 1024), checkpoints: s.checkpoints, exactlyOnce: s.exactlyOnce,
		pending: map[int64][]byte{}}
	return task.Built{Op: op, Inputs: []any{op}}, nil
}

// Redistribution says that each old subtask's pending transactions go
// whole to one new subtask when the task restores at another parallelism,
// which commits them on Recover.
func (s *node[T]) Redistribution() task.Redistribution { return task.Reassigned }

// HandsOver says that the sink's writers can pass in memory at a live
// rescale (task.HandOverNode): see Adopt.
func (s *node[T]) HandsOver() {}

type op[T any] struct {
	sink      connector.Sink[T]
	w         connector.Writer[T]
	committer connector.Committer // nil unless two-phase commit is in use
	ctx       *task.Context
	batch     []T
	// checkpoints: the job takes checkpoints; exactlyOnce: its guarantee
	// is exactly-once.
	checkpoints, exactlyOnce bool
	// pending holds the pre-committed transactions by checkpoint id until
	// a checkpoint at or after them completes.
	pending  map[int64][]byte
	restored [][]byte // transactions to commit on Recover
	// adopted: the writer is a retired subtask's, taken over open
	// (Adopt); extra are the other retired operators whose transactions
	// this one commits, until each has none left.
	adopted bool
	extra   []*op[T]
	ts      []int64 // event times of the batch, with latency tracking
	wrote   bool    // this operator wrote its first batch
}

func (s *op[T]) Open(ctx *task.Context) error {
	s.ctx = ctx
	if s.adopted {
		return nil // open and recovered by the retired subtask
	}
	w, err := s.sink.Open(ctx.Ctx, connector.SubtaskInfo{Operator: ctx.Operator, Subtask: ctx.Subtask, Parallelism: ctx.Parallelism, Attempt: ctx.Attempt})
	if err != nil {
		return err
	}
	s.w = w
	if !s.checkpoints {
		return nil
	}
	if c, ok := w.(connector.Committer); ok {
		s.committer = c
		err := c.Recover(ctx.Ctx, ctx.Restored, s.restored)
		s.restored = nil
		if err != nil {
			return fmt.Errorf("recovering transactions: %w", err)
		}
		return nil
	}
	if s.exactlyOnce {
		if i, ok := s.sink.(connector.Idempotent); ok && i.Idempotent() {
			return nil
		}
		return task.Permanent(fmt.Errorf("sink %q cannot write exactly-once: its writer neither commits with checkpoints (connector.Committer) nor is idempotent (connector.Idempotent); choose another sink or --guarantee at-least-once", ctx.Operator))
	}
	return nil
}

func (s *op[T]) Collect(ts int64, v T) {
	s.batch = append(s.batch, v)
	if s.ctx.TrackLatency {
		s.ts = append(s.ts, ts)
	}
	if len(s.batch) == cap(s.batch) {
		if err := s.write(); err != nil {
			task.Fail(err)
		}
	}
}

func (s *op[T]) write() error {
	if len(s.batch) == 0 {
		return nil
	}
	err := s.w.Write(s.ctx.Ctx, s.batch)
	s.ctx.Metrics.Written.Add(int64(len(s.batch)))
	if !s.wrote {
		// The first write of this incarnation (a subtask restarted alone
		// keeps counting Written).
		s.wrote = true
		s.ctx.Metrics.FirstWrite.Store(time.Now().UnixNano())
	}
	if len(s.ts) > 0 {
		// Event-time latency: how far the written records' event times
		// lag the wall clock.
		now := time.Now().UnixMilli()
		for _, t := range s.ts {
			if t != dataflow.MinWatermark && t <= now {
				s.ctx.Metrics.EventTimeLatency.Observe(time.Duration(now-t) * time.Millisecond)
			}
		}
		s.ts = s.ts[:0]
	}
	clear(s.batch)
	s.batch = s.batch[:0]
	return err
}

// Flush writes buffered records when the task's input runs dry.
func (s *op[T]) Flush() error { return s.write() }

func (s *op[T]) Watermark(wm int64) int64 { return wm }

// EndInput writes what is left. Without checkpoints the output is final
// now; with them, the final checkpoint commits it.
func (s *op[T]) EndInput() error {
	if err := s.write(); err != nil {
		return err
	}
	return s.w.Flush(s.ctx.Ctx)
}

func (s *op[T]) Close() error {
	var err error
	for _, x := range s.extra {
		err = errors.Join(err, x.Close())
	}
	s.extra = nil
	if s.w == nil {
		return err
	}
	err = errors.Join(err, s.w.Close())
	s.w = nil
	return err
}

// PrepareSnapshot writes the records before the barrier and pre-commits
// them (two-phase commit) or flushes them (at-least-once).
func (s *op[T]) PrepareSnapshot(id int64) error {
	if err := s.write(); err != nil {
		return err
	}
	if s.committer == nil {
		return s.w.Flush(connector.WithCheckpoint(s.ctx.Ctx, id))
	}
	txn, err := s.committer.PreCommit(s.ctx.Ctx, id)
	if err != nil {
		return err
	}
	s.pending[id] = txn
	return nil
}

// CheckpointComplete commits every transaction up to checkpoint id, the
// adopted ones too; an adopted writer with none left closes.
func (s *op[T]) CheckpointComplete(id int64) error {
	if err := s.commitUpTo(s.ctx.Ctx, id); err != nil {
		return err
	}
	var left []*op[T]
	for _, x := range s.extra {
		if err := x.commitUpTo(s.ctx.Ctx, id); err != nil {
			return err
		}
		if len(x.pending) > 0 {
			left = append(left, x)
		} else if err := x.Close(); err != nil {
			return fmt.Errorf("closing the writer of a retired subtask: %w", err)
		}
	}
	s.extra = left
	return nil
}

// commitUpTo commits the operator's transactions up to checkpoint id in
// ctx (an adopting operator's, for a retired one's).
func (s *op[T]) commitUpTo(ctx context.Context, id int64) error {
	if s.committer == nil {
		return nil
	}
	for _, cid := range s.pendingIDs() {
		if cid > id {
			break
		}
		if err := s.committer.Commit(ctx, s.pending[cid]); err != nil {
			return err
		}
		delete(s.pending, cid)
	}
	return nil
}

// Adopt takes over, before Open, the writers of the retired subtasks
// whose transactions this one would restore (task.Reassigned): the one
// of the same index goes on as this subtask's writer, open, with its
// transactions pending; the others' pending transactions commit here
// with the checkpoints, as this subtask's do, and their writers close
// then. A new writer of the index would conflict with the retired one
// (the same transactional id, the same file names) while its
// transactions wait.
func (s *op[T]) Adopt(a task.Adoption) error {
	for k, o := range a.Old {
		old, ok := o.(*op[T])
		if !ok {
			return fmt.Errorf("the retired operator of subtask %d (%T) is no sink of this kind", a.From[k], o)
		}
		if a.From[k] != a.Subtask {
			s.extra = append(s.extra, old)
			continue
		}
		s.w, s.committer, s.adopted = old.w, old.committer, true
		maps.Copy(s.pending, old.pending)
	}
	return nil
}

// CheckpointAborted keeps the transaction: its records are valid and the
// next completed checkpoint commits them.
func (s *op[T]) CheckpointAborted(int64) {}

func (s *op[T]) pendingIDs() []int64 {
	ids := make([]int64, 0, len(s.pending))
	for id := range s.pending {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	return ids
}

// Snapshot stores the pending transactions, the adopted ones too.
func (s *op[T]) Snapshot(task.SnapshotOptions) (func(dst []byte) (task.Encoded, error), error) {
	var out []byte
	for _, x := range append([]*op[T]{s}, s.extra...) {
		for _, id := range x.pendingIDs() {
			out = binary.AppendVarint(out, id)
			out = binary.AppendUvarint(out, uint64(len(x.pending[id])))
			out = append(out, x.pending[id]...)
		}
	}
	return task.Taken(out), nil
}

// Restore loads the transactions of the restored checkpoint; Open commits
// them through Recover.
func (s *op[T]) Restore(data []byte) error {
	for len(data) > 0 {
		_, n := binary.Varint(data)
		if n <= 0 {
			return fmt.Errorf("sink state: bad checkpoint id: %w", codec.ErrCorrupt)
		}
		data = data[n:]
		l, n := binary.Uvarint(data)
		if n <= 0 || uint64(len(data)-n) < l {
			return fmt.Errorf("sink state: truncated transaction: %w", codec.ErrCorrupt)
		}
		s.restored = append(s.restored, append([]byte(nil), data[n:n+int(l)]...))
		data = data[n+int(l):]
	}
	return nil
}
