// Package opstate implements the operator with operator state: a function
// over a stream without keys that keeps named lists per subtask (Flink's
// operator ListState), snapshotted with every checkpoint. Restored at the
// same parallelism a subtask gets its own lists back; at another one the
// lists of all old subtasks are pooled (task.Union) and a new subtask
// takes an even share of each split list, or the whole of each union
// list.
package opstate

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/task"
)

// Function is one subtask's function, as the public API adapts it.
type Function[In any] interface {
	// Open creates the lists on s (Register) before the first record.
	Open(s *Store) error
	Collect(ts int64, in In) error
	// Snapshot lets the function write its lists before they are
	// snapshotted for checkpoint id.
	Snapshot(id int64) error
	// EndInput is called once bounded input ended.
	EndInput() error
}

// Node is the operator.
type Node[In any] struct {
	// New returns the function of a subtask, emitting through its own
	// collector of the outputs (task.NodeImpl.Build's outs).
	New func(ctx *task.Context, outs []any) Function[In]
}

// Redistribution: the lists of every old subtask go to every new one,
// which keeps its share (Store.Register).
func (*Node[In]) Redistribution() task.Redistribution { return task.Union }

func (n *Node[In]) Build(ctx *task.Context, outs []any) (task.Built, error) {
	o := &op[In]{fn: n.New(ctx, outs), name: ctx.Operator,
		store: &Store{subtask: ctx.Subtask, parallelism: ctx.Parallelism, lists: map[string]List{}, restored: map[string][][]byte{}}}
	return task.Built{Op: o, Inputs: []any{o}}, nil
}

type op[In any] struct {
	task.Base
	fn    Function[In]
	name  string
	store *Store
}

func (o *op[In]) Open(*task.Context) error { return o.fn.Open(o.store) }

func (o *op[In]) Collect(ts int64, v In) {
	if err := o.fn.Collect(ts, v); err != nil {
		task.Fail(fmt.Errorf("%s: %w", o.name, err))
	}
}

func (o *op[In]) EndInput() error { return o.fn.EndInput() }

// Snapshot asks the function to write its lists, then encodes them at
// once.
func (o *op[In]) Snapshot(opts task.SnapshotOptions) (func(dst []byte) (task.Encoded, error), error) {
	if err := o.fn.Snapshot(opts.Checkpoint); err != nil {
		return nil, err
	}
	b := o.store.encode()
	return task.Taken(b), nil
}

func (o *op[In]) Restore(data []byte) error { return o.store.restore(data) }

// List is a list of operator state that encodes its elements one by one.
type List interface {
	// Encode appends the encodings of the elements to dst, one each.
	Encode(dst [][]byte) [][]byte
	// Decode sets the elements from their encodings.
	Decode(items [][]byte) error
}

// Store is one subtask's operator state: named lists.
type Store struct {
	subtask, parallelism int
	lists                map[string]List
	restored             map[string][][]byte // element encodings, pooled over the snapshots restored
	rescaled             bool                // a snapshot restored was of another parallelism
}

// Register adds list l under name and loads its restored elements:
// after a restore at another parallelism, union takes them all, and
// otherwise the subtask takes its even share of the pooled elements of
// every old subtask (in old subtask order: subtask j of n takes elements
// [j·len/n, (j+1)·len/n)).
func (s *Store) Register(name string, l List, union bool) error {
	if _, dup := s.lists[name]; dup {
		return fmt.Errorf("operator state %q created twice", name)
	}
	items := s.restored[name]
	delete(s.restored, name)
	if s.rescaled && !union {
		n, j := len(items), s.subtask
		items = items[j*n/s.parallelism : (j+1)*n/s.parallelism]
	}
	if err := l.Decode(items); err != nil {
		return fmt.Errorf("restoring operator state %q: %w", name, err)
	}
	s.lists[name] = l
	return nil
}

// encode writes the parallelism, then each list by name: its name and
// its elements, length-prefixed. Restored lists no function registered
// again are written as they were restored.
func (s *Store) encode() []byte {
	all := maps.Clone(s.restored)
	for name, l := range s.lists {
		all[name] = l.Encode(nil)
	}
	b := binary.AppendUvarint(nil, uint64(s.parallelism))
	b = binary.AppendUvarint(b, uint64(len(all)))
	for _, name := range slices.Sorted(maps.Keys(all)) {
		b = appendChunk(b, []byte(name))
		b = binary.AppendUvarint(b, uint64(len(all[name])))
		for _, item := range all[name] {
			b = appendChunk(b, item)
		}
	}
	return b
}

func appendChunk(b, c []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(c))), c...)
}

// restore pools the lists of one old subtask's snapshot.
func (s *Store) restore(data []byte) error {
	r := reader{data}
	par := r.uvarint()
	if par != uint64(s.parallelism) {
		s.rescaled = true
	}
	for range r.uvarint() {
		name := string(r.chunk())
		for range r.uvarint() {
			s.restored[name] = append(s.restored[name], r.chunk())
		}
	}
	if r.data == nil {
		return fmt.Errorf("operator state: %w", codec.ErrCorrupt)
	}
	return nil
}

// reader reads a snapshot; data is nil once it met corrupt input.
type reader struct{ data []byte }

func (r *reader) uvarint() uint64 {
	v, k := binary.Uvarint(r.data)
	if k <= 0 {
		r.data = nil
		return 0
	}
	r.data = r.data[k:]
	return v
}

func (r *reader) chunk() []byte {
	n := r.uvarint()
	if uint64(len(r.data)) < n {
		r.data = nil
		return nil
	}
	c := r.data[:n:n]
	r.data = r.data[n:]
	return c
}
