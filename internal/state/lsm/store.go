package lsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// Key layout. Every key starts with its key group, two bytes big-endian;
// MetaGroup, above every key group, holds the stores' own records (a
// table's name and schemas by table id).
const (
	// MetaGroup is the key-group prefix of the store's records about its
	// tables; no key group reaches it.
	MetaGroup = 0xffff
	// MaxKeyGroups is the most key groups a store can address.
	MaxKeyGroups = MetaGroup
	prefixLen    = 6
)

// AppendKey appends the prefix of table id's keys in key group kg to dst.
func AppendKey(dst []byte, kg int, table uint32) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(kg))
	return binary.BigEndian.AppendUint32(dst, table)
}

// TableRange returns the bounds [lo, hi) of table id's keys in key group
// kg.
func TableRange(kg int, table uint32) (lo, hi []byte) {
	lo = AppendKey(nil, kg, table)
	if table == ^uint32(0) {
		return lo, AppendKey(nil, kg+1, 0)
	}
	return lo, AppendKey(nil, kg, table+1)
}

// groupKey is the first key of key group kg.
func groupKey(kg int) []byte { return binary.BigEndian.AppendUint16(nil, uint16(kg)) }

// Store is one operator instance's tables in an LSM tree. It is used from
// the instance's goroutine, except Pending.Upload, which runs on another.
type Store struct {
	env     *Env
	db      *pebble.DB
	dir     string
	id      string // names this store's uploads: <id>-<file>
	key     string // the instance's identity across restarts, for local copies
	kgStart int
	kgEnd   int

	mu       sync.Mutex
	uploaded map[string]File // by local file name: the shared file it is
	views    sync.WaitGroup  // open views, which Close waits for
}

// Open returns an empty store for key groups [kgStart, kgEnd) of the
// instance known as key (stable across restarts of the instance: its job,
// operator and key groups), used to keep the local copies of its files.
func (e *Env) Open(key string, kgStart, kgEnd int) (*Store, error) {
	if kgEnd > MaxKeyGroups {
		return nil, fmt.Errorf("lsm: %d key groups, at most %d", kgEnd, MaxKeyGroups)
	}
	dir := e.newDir("db")
	return e.openAt(dir, key, kgStart, kgEnd, nil)
}

func (e *Env) openAt(dir, key string, kgStart, kgEnd int, uploaded map[string]File) (*Store, error) {
	db, err := pebble.Open(dir, e.options())
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("lsm: open store: %w", err)
	}
	if uploaded == nil {
		uploaded = map[string]File{}
	}
	s := &Store{env: e, db: db, dir: dir, id: randomID(), key: key, kgStart: kgStart, kgEnd: kgEnd, uploaded: uploaded}
	e.register(s)
	return s, nil
}

// Close closes the store and removes its directory, once the views of it
// still encoding a savepoint on other goroutines are closed.
func (s *Store) Close() error {
	if s.db == nil {
		return nil
	}
	s.views.Wait()
	s.env.unregister(s)
	err := s.db.Close()
	s.db = nil
	if rerr := os.RemoveAll(s.dir); err == nil {
		err = rerr
	}
	return err
}

func (s *Store) metrics() *pebble.Metrics {
	if s.db == nil {
		return nil
	}
	return s.db.Metrics()
}

// Get calls f with the value stored under key, if there is one; the
// value is valid only during f. It reports whether it found the key.
func (s *Store) Get(key []byte, f func(value []byte) error) (bool, error) {
	v, c, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("lsm: get: %w", err)
	}
	err = f(v)
	c.Close()
	return true, err
}

// Batch collects writes to apply together.
type Batch struct {
	s *Store
	b *pebble.Batch
}

// NewBatch returns an empty batch.
func (s *Store) NewBatch() *Batch { return &Batch{s: s, b: s.db.NewBatch()} }

// Set writes value under key; both are copied.
func (b *Batch) Set(key, value []byte) { _ = b.b.Set(key, value, nil) }

// Delete removes key.
func (b *Batch) Delete(key []byte) { _ = b.b.Delete(key, nil) }

// Len is the bytes the batch holds.
func (b *Batch) Len() int { return b.b.Len() }

// Commit applies the batch and empties it for reuse.
func (b *Batch) Commit() error {
	if b.b.Empty() {
		return nil
	}
	err := b.s.db.Apply(b.b, pebble.NoSync)
	b.b.Reset()
	if err != nil {
		return fmt.Errorf("lsm: write: %w", err)
	}
	return nil
}

// Close releases the batch without applying what it holds.
func (b *Batch) Close() { _ = b.b.Close() }

// Scan calls f for each key in [lower, upper) in order, until f returns
// false or an error; key and value are valid only during the call.
func (s *Store) Scan(lower, upper []byte, f func(key, value []byte) (bool, error)) error {
	return scan(s.db, lower, upper, f)
}

type reader interface {
	NewIter(*pebble.IterOptions) (*pebble.Iterator, error)
}

func scan(r reader, lower, upper []byte, f func(key, value []byte) (bool, error)) error {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("lsm: scan: %w", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return fmt.Errorf("lsm: scan: %w", err)
		}
		more, err := f(it.Key(), v)
		if err != nil || !more {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("lsm: scan: %w", err)
	}
	return nil
}

// View is a consistent read-only view of a store at one moment, for a
// snapshot's encoding on another goroutine. Close it when done.
type View struct {
	s    *Store
	snap *pebble.Snapshot
	once sync.Once
}

// View returns a view of the store as it is now. The store does not
// close before the view does.
func (s *Store) View() *View {
	s.views.Add(1)
	return &View{s: s, snap: s.db.NewSnapshot()}
}

// Scan is Store.Scan over the view.
func (v *View) Scan(lower, upper []byte, f func(key, value []byte) (bool, error)) error {
	return scan(v.snap, lower, upper, f)
}

// Close releases the view.
func (v *View) Close() {
	v.once.Do(func() {
		_ = v.snap.Close()
		v.s.views.Done()
	})
}

// KeyGroups returns the key groups [start, end) the store holds.
func (s *Store) KeyGroups() (start, end int) { return s.kgStart, s.kgEnd }
