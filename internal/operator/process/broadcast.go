package process

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/operator"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/task"
)

// BroadcastNode is a keyed process operator with a second, broadcast
// input: every subtask sees every record of the broadcast input and keeps
// the broadcast state it writes (a BroadcastStore), so all subtasks hold
// the same copy; the keyed input has keyed state and timers as in Node.
//
// The operator's snapshot is the broadcast state followed by the keyed
// state. Its state moves by key group: a new subtask restores the keyed
// state of every old subtask whose key groups overlap its own, and the
// broadcast state of the first of them, every old subtask's copy being
// the same.
type BroadcastNode[K comparable, In, B, Out, C any] struct {
	Key  func(In) K
	Keys keyed.Keys[K]
	// New returns one subtask's function of the keyed input and the
	// handler of a broadcast record. Both may emit to out; the handler
	// reads the record's time from core (TS) and writes store.
	New   func(core *keyed.Core[K], out task.Collector[Out], store *BroadcastStore) (Function[C, In], func(B) error)
	Hooks Hooks[K, In, Out, C]
}

// Redistribution says that the keyed state moves by key group; the
// broadcast state goes with it (see BroadcastNode).
func (*BroadcastNode[K, In, B, Out, C]) Redistribution() task.Redistribution { return task.ByKeyGroup }

func (n *BroadcastNode[K, In, B, Out, C]) Build(ctx *task.Context, outs []any) (task.Built, error) {
	out := operator.Out[Out](outs, 0)
	core := keyed.NewCore[K](ctx, n.Keys)
	store := &BroadcastStore{name: ctx.Operator, tables: map[string]BroadcastTable{}, restored: map[string][]byte{}}
	fn, onBroadcast := n.New(core, out, store)
	p := &op[K, In, Out, C]{key: n.Key, fn: fn, hooks: n.Hooks, core: core}
	p.ctx = n.Hooks.Context(core, outs, false)
	b := &broadcastOp[K, In, Out, C]{op: p, store: store}
	in := &broadcastInput[B]{core: &core.TS, store: store, fn: onBroadcast, name: ctx.Operator}
	return task.Built{Op: b, Inputs: []any{p, in}}, nil
}

type broadcastOp[K comparable, In, Out, C any] struct {
	*op[K, In, Out, C]
	store *BroadcastStore
}

// Snapshot encodes the broadcast state at once (the task is paused) and
// freezes the keyed state.
func (b *broadcastOp[K, In, Out, C]) Snapshot(o task.SnapshotOptions) (func(dst []byte) (task.Encoded, error), error) {
	bc := b.store.encode()
	enc, err := b.op.Snapshot(o)
	if err != nil {
		return nil, err
	}
	return func(dst []byte) (task.Encoded, error) {
		dst = binary.AppendUvarint(dst, uint64(len(bc)))
		return enc(append(dst, bc...))
	}, nil
}

// Restore takes the broadcast state of the first snapshot it is given
// (the others are copies) and the keyed state of each.
func (b *broadcastOp[K, In, Out, C]) Restore(data []byte) error {
	n, k := binary.Uvarint(data)
	if k <= 0 || uint64(len(data)-k) < n {
		return fmt.Errorf("broadcast state: %w", codec.ErrCorrupt)
	}
	bc := data[k : k+int(n)]
	if !b.store.took {
		if err := b.store.restore(bc); err != nil {
			return err
		}
	}
	return b.op.Restore(data[k+int(n):])
}

// broadcastInput is the broadcast input: it makes the store writable for
// the handler's call.
type broadcastInput[B any] struct {
	core  *int64 // the core's current time
	store *BroadcastStore
	fn    func(B) error
	name  string
}

func (in *broadcastInput[B]) Collect(ts int64, v B) {
	*in.core = ts
	in.store.writable = true
	err := in.fn(v)
	in.store.writable = false
	if err != nil {
		task.Fail(fmt.Errorf("%s: broadcast element: %w", in.name, err))
	}
}

// BroadcastStore is one subtask's broadcast state: named tables, writable
// only while a broadcast record is handled. Tables restored but not
// registered again are kept as they were, so a job that stops using one
// for a version does not lose it.
type BroadcastStore struct {
	name     string // the operator's, for errors
	tables   map[string]BroadcastTable
	restored map[string][]byte
	took     bool // a snapshot was restored; further ones are copies
	writable bool
}

// BroadcastTable is a table of broadcast state that encodes itself.
type BroadcastTable interface {
	Encode(dst []byte) []byte
	Decode(data []byte) error
}

// Register adds table t under name, loading what a restored snapshot
// holds for it. A name registered twice is an error.
func (s *BroadcastStore) Register(name string, t BroadcastTable) error {
	if _, dup := s.tables[name]; dup {
		return fmt.Errorf("broadcast state %q created twice", name)
	}
	if data, ok := s.restored[name]; ok {
		if err := t.Decode(data); err != nil {
			return fmt.Errorf("restoring broadcast state %q: %w", name, err)
		}
		delete(s.restored, name)
	}
	s.tables[name] = t
	return nil
}

// CheckWritable fails the task when the broadcast state is changed
// outside the handling of a broadcast record: the keyed side must not
// change it, or the subtasks' copies would differ.
func (s *BroadcastStore) CheckWritable(table string) {
	if !s.writable {
		task.Failf("%s: broadcast state %q is read-only outside ProcessBroadcastElement", s.name, table)
	}
}

// encode writes the tables by name: count, then name and data of each.
func (s *BroadcastStore) encode() []byte {
	all := maps.Clone(s.restored)
	for name, t := range s.tables {
		all[name] = t.Encode(nil)
	}
	b := binary.AppendUvarint(nil, uint64(len(all)))
	for _, name := range slices.Sorted(maps.Keys(all)) {
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		b = binary.AppendUvarint(b, uint64(len(all[name])))
		b = append(b, all[name]...)
	}
	return b
}

// restore loads encoded tables before Open.
func (s *BroadcastStore) restore(data []byte) error {
	s.took = true
	n, data, err := uvarint(data)
	if err != nil {
		return err
	}
	for range n {
		var name, table []byte
		if name, data, err = chunk(data); err != nil {
			return err
		}
		if table, data, err = chunk(data); err != nil {
			return err
		}
		s.restored[string(name)] = table
	}
	return nil
}

func uvarint(b []byte) (uint64, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, nil, fmt.Errorf("broadcast state: %w", codec.ErrCorrupt)
	}
	return n, b[k:], nil
}

func chunk(b []byte) (c, rest []byte, err error) {
	n, b, err := uvarint(b)
	if err != nil || uint64(len(b)) < n {
		return nil, nil, fmt.Errorf("broadcast state: %w", codec.ErrCorrupt)
	}
	return b[:n], b[n:], nil
}

// BroadcastMap is a map of broadcast state, encoded with its codecs.
type BroadcastMap[UK comparable, UV any] struct {
	M     map[UK]UV
	Key   codec.Codec[UK]
	Value codec.Codec[UV]
}

// Encode writes the entries, sorted by their keys' encoding so that
// equal maps encode alike.
func (m *BroadcastMap[UK, UV]) Encode(dst []byte) []byte {
	type entry struct{ k, v []byte }
	es := make([]entry, 0, len(m.M))
	for k, v := range m.M {
		es = append(es, entry{m.Key.Append(nil, k), m.Value.Append(nil, v)})
	}
	slices.SortFunc(es, func(a, b entry) int { return slices.Compare(a.k, b.k) })
	dst = binary.AppendUvarint(dst, uint64(len(es)))
	for _, e := range es {
		dst = append(append(dst, e.k...), e.v...)
	}
	return dst
}

// Decode replaces the entries with the encoded ones.
func (m *BroadcastMap[UK, UV]) Decode(data []byte) error {
	n, data, err := uvarint(data)
	if err != nil {
		return err
	}
	m.M = make(map[UK]UV, n)
	for range n {
		var k UK
		var v UV
		i, err := m.Key.Decode(data, &k)
		if err != nil {
			return err
		}
		data = data[i:]
		if i, err = m.Value.Decode(data, &v); err != nil {
			return err
		}
		data = data[i:]
		m.M[k] = v
	}
	return nil
}
