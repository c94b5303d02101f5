package state

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/weir-stream/weir/internal/state/lsm"
)

// The pebble state backend. A Backend made by NewLSMBackend keeps its
// keyed tables (those with a key-group function or Sharded) in an LSM
// store (package lsm), under keys prefixed by key group and table id;
// timers and unsharded tables stay in memory and are snapshotted as the
// memory backend does. The Go maps of such a table are then a write-back
// cache of decoded entries: reads that miss load from the store, writes
// stay in the map until they are written through — at a snapshot, and
// between batches of input when the cache holds more entries than its
// budget (Settle), after which the cache is emptied and Epoch advances, so
// operators drop the references they hold into state.
//
// A checkpoint writes the changes through, flushes the store and
// hard-links its files (the synchronous part), then uploads the files no
// earlier checkpoint uploaded and records the store's manifest in a
// section of the snapshot. A savepoint (SnapshotOptions.Savepoint) is
// encoded in the memory backend's format instead, from a consistent view
// of the store, so that any backend restores it. A restore reads both:
// manifests open (or, after a rescale, merge) the stores; sections of
// the memory format are written into the store when their table
// registers.

// lsmSection names the section holding a store's manifest.
const lsmSection = "\x00lsm"

// LSMOptions place an LSM backend.
type LSMOptions struct {
	// Env returns the process's environment of stores, made when the
	// first store opens; Files are the job's shared files.
	Env   func() (*lsm.Env, error)
	Files lsm.Files
	// Key identifies the operator instance across restarts (job, operator
	// uid and key groups), for local copies of its files.
	Key string
	// Ctx bounds uploads and downloads.
	Ctx context.Context
}

// lsmBackend is the LSM part of a Backend.
type lsmBackend struct {
	o         LSMOptions
	store     *lsm.Store
	manifests []*lsm.Manifest // restored, opened by open
	tables    []lsmTable      // registered tables in the store
	ids       map[uint32]string
	cached    int // entries in the tables' caches
	limit     int
	stats     lsm.RestoreStats
	closed    bool
}

// lsmTable is a table kept in the store.
type lsmTable interface {
	// writeThrough adds the table's changes to b and forgets which
	// entries changed.
	writeThrough(b *lsm.Batch)
	// evict empties the cache.
	evict()
	// canonical returns the function that encodes the table's entries
	// in v in the memory backend's format.
	canonical(v *lsm.View) func([]byte) ([]byte, error)
}

// NewLSMBackend returns an empty backend for an operator instance owning
// key groups [kgStart, kgEnd) of maxPar whose keyed tables live in an LSM
// store. Open opens the store, after Restore.
func NewLSMBackend(kgStart, kgEnd, maxPar int, o LSMOptions) *Backend {
	b := NewBackend(kgStart, kgEnd, maxPar)
	if o.Ctx == nil {
		o.Ctx = context.Background()
	}
	b.lsm = &lsmBackend{o: o, ids: map[uint32]string{}}
	return b
}

// Open opens the store an LSM backend restores from the manifests Restore
// found, if any: its files are linked from local copies or downloaded
// (RestoreStats). An error wrapping lsm.ErrCorrupt means the checkpoint's
// files failed verification. A backend that restores no store opens an
// empty one when its first table registers; one whose operator registers
// no keyed table then has no store at all. Open does nothing for a memory
// backend or a second time.
func (b *Backend) Open() error {
	if b.lsm == nil || len(b.lsm.manifests) == 0 {
		return nil
	}
	return b.openStore()
}

// openStore opens the store, restored or empty, if it is not open.
func (b *Backend) openStore() error {
	l := b.lsm
	if l.store != nil {
		return nil
	}
	if l.closed {
		return errors.New("state: the backend is closed")
	}
	env, err := l.o.Env()
	if err != nil {
		return err
	}
	s, st, err := env.Restore(l.o.Ctx, l.o.Files, l.o.Key, b.kgStart, b.kgEnd, l.manifests)
	if err != nil {
		return err
	}
	l.limit = env.CacheEntries()
	l.store, l.stats, l.manifests = s, st, nil
	return nil
}

// RestoreStats says where an LSM backend's restore found its files.
func (b *Backend) RestoreStats() lsm.RestoreStats {
	if b.lsm == nil {
		return lsm.RestoreStats{}
	}
	return b.lsm.stats
}

// Close releases the backend's store, if it has one.
func (b *Backend) Close() error {
	if b.lsm == nil {
		return nil
	}
	b.lsm.closed = true
	if b.lsm.store == nil {
		return nil
	}
	err := b.lsm.store.Close()
	b.lsm.store = nil
	return err
}

// Settle writes the changes cached in front of an LSM store through and
// empties the caches when they hold more entries than their budget. The
// caller holds no reference into state (task.Settler).
func (b *Backend) Settle() error {
	if b.lsm == nil || b.lsm.store == nil || b.lsm.cached <= b.lsm.limit {
		return nil
	}
	if err := b.writeThrough(); err != nil {
		return err
	}
	for _, t := range b.lsm.tables {
		t.evict()
	}
	b.lsm.cached = 0
	b.epoch++ // operators drop the references they cached
	return nil
}

// writeThrough writes every LSM table's changes to the store.
func (b *Backend) writeThrough() error {
	if err := b.openStore(); err != nil {
		return err
	}
	batch := b.lsm.store.NewBatch()
	defer batch.Close()
	for _, t := range b.lsm.tables {
		t.writeThrough(batch)
	}
	return batch.Commit()
}

// tableID returns the id of the table name in the store, failing when
// another registered table has the same.
func (l *lsmBackend) tableID(name string) (uint32, error) {
	id := idOf(name)
	if other, ok := l.ids[id]; ok && other != name {
		return 0, fmt.Errorf("state %q: its id in the store is that of %q; rename one", name, other)
	}
	l.ids[id] = name
	return id, nil
}

// idOf returns the id in the store of the table name, unless another
// table has it (tableID).
func idOf(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return h.Sum32()
}

// recorded reports whether the store holds the table name: whether a
// table of that name was registered in it, or in the store of a
// restored checkpoint.
func (l *lsmBackend) recorded(name string) (bool, error) {
	if l.store == nil {
		return false, nil // nothing restored into a store
	}
	var got string
	found, err := l.store.Get(lsm.AppendKey(nil, lsm.MetaGroup, idOf(name)), func(v []byte) error {
		got = string(v)
		return nil
	})
	return found && got == name, err
}

// recordName writes the table's name under its id, so that a savepoint
// of a store holding a table no operator registered names it.
func (l *lsmBackend) recordName(id uint32, name string) error {
	b := l.store.NewBatch()
	defer b.Close()
	b.Set(lsm.AppendKey(nil, lsm.MetaGroup, id), []byte(name))
	return b.Commit()
}

// lsmFrozen is the LSM part of a snapshot between lsmFreeze and the
// encoding: a checkpoint of the store to upload, or for a savepoint a
// view of it and the tables in it that no operator registered, to encode
// in the memory format.
type lsmFrozen struct {
	view    *lsm.View
	pending *lsm.Pending
	orphans []orphanTable
}

type orphanTable struct {
	id   uint32
	name string
}

func (b *Backend) lsmFreeze(savepoint bool) (*lsmFrozen, error) {
	if b.lsm.store == nil && len(b.lsm.manifests) == 0 {
		return nil, nil // no keyed table, nothing restored: no store
	}
	if err := b.writeThrough(); err != nil {
		return nil, err
	}
	s := b.lsm.store
	if !savepoint {
		p, err := s.Checkpoint()
		if err != nil {
			return nil, err
		}
		return &lsmFrozen{pending: p}, nil
	}
	f := &lsmFrozen{view: s.View()}
	// Tables in the store that no operator registered since the restore
	// go into the savepoint by the names they were recorded under.
	err := f.view.Scan(lsm.AppendKey(nil, lsm.MetaGroup, 0), nil, func(k, v []byte) (bool, error) {
		id := binary.BigEndian.Uint32(k[2:])
		if _, ok := b.lsm.ids[id]; !ok {
			f.orphans = append(f.orphans, orphanTable{id: id, name: string(v)})
		}
		return true, nil
	})
	if err != nil {
		f.view.Close()
		return nil, err
	}
	sort.Slice(f.orphans, func(i, j int) bool { return f.orphans[i].name < f.orphans[j].name })
	return f, nil
}

// scanTable calls f with the key (without its prefix), value and key
// group of every entry of table id in key groups [start, end) of v.
func scanTable(v *lsm.View, id uint32, start, end int, f func(kg int, key, value []byte) error) error {
	for kg := start; kg < end; kg++ {
		lo, hi := lsm.TableRange(kg, id)
		err := v.Scan(lo, hi, func(k, val []byte) (bool, error) {
			return true, f(kg, k[len(lo):], val)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// appendCanonical appends table id's entries in v in the memory backend's
// format: key group, key, value, each entry.
func appendCanonical(dst []byte, v *lsm.View, id uint32, start, end int) ([]byte, error) {
	err := scanTable(v, id, start, end, func(kg int, key, value []byte) error {
		dst = binary.AppendUvarint(dst, uint64(kg))
		dst = append(dst, key...)
		dst = append(dst, value...)
		return nil
	})
	return dst, err
}
