// Package lsm keeps a state backend's keyed tables in an embedded LSM tree
// (Pebble) on the local disk: state larger than memory, checkpointed
// incrementally and recovered from local files when they are there.
//
// One Store serves one operator instance. Keys are prefixed by key group
// (two bytes, big-endian) and then by table (four bytes), so a key-group
// range is one contiguous key range: a restore at another parallelism
// keeps its range of a store and drops the rest with range deletions.
//
// A checkpoint (Store.Checkpoint) flushes the memtable and hard-links the
// store's files into a checkpoint directory, synchronously; its upload
// (Pending.Upload), on another goroutine, copies only the table files
// not uploaded before into the job's shared files and returns a manifest
// naming them. The files are immutable and shared by every checkpoint
// that names them; the checkpoint store deletes one once no retained
// checkpoint names it (internal/store). A restore (Env.Restore) links the
// files a manifest names from the worker's local copies when it has them
// and downloads the rest, checking each one's size and checksum.
//
// The Env is the worker's: the block cache and the memtable budget are
// shared by every store it opens.
package lsm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Files is where a job's shared state files go: the checkpoint store's
// shared area. Names are unique; a file once put never changes.
type Files interface {
	// Put stores data under name.
	Put(ctx context.Context, name string, data []byte) error
	// Get returns the data stored under name.
	Get(ctx context.Context, name string) ([]byte, error)
}

// Config sizes a worker's stores.
type Config struct {
	// Dir is the local directory under which stores and the local copies
	// of checkpointed files live.
	Dir string
	// BlockCache is the bytes of the block cache every store shares.
	BlockCache int64
	// MemTables is the bytes of memtables the stores may hold together;
	// each store gets an equal share of it (Stores), at least 1 MiB.
	MemTables int64
	// Stores is how many stores the budget is shared by; 0 means 8.
	Stores int
	// Cache is how many decoded entries a backend keeps in memory before
	// it writes changes through and forgets them; 0 means 16384.
	Cache int
}

// Env is a worker's environment for stores: their directory, the shared
// block cache and the memtable budget, the local copies of checkpointed
// files, and the open stores for metrics. Its methods are safe for
// concurrent use.
type Env struct {
	cfg   Config
	cache *pebble.Cache

	mu     sync.Mutex
	open   map[*Store]struct{}
	local  map[string]int        // local copies of shared files: references
	kept   map[string][][]string // per store key: the names of its last two checkpoints
	pre    map[string][][]string // per prefetch key: the names of its last two prefetches
	closed bool
}

// NewEnv returns an Env for cfg, creating cfg.Dir.
func NewEnv(cfg Config) (*Env, error) {
	if cfg.Dir == "" {
		return nil, fmt.Errorf("lsm: no directory for local state")
	}
	cfg.defaults()
	for _, d := range []string{"files", "prefetched"} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("lsm: local state directory: %w", err)
		}
	}
	return &Env{cfg: cfg, cache: pebble.NewCache(cfg.BlockCache), open: map[*Store]struct{}{},
		local: map[string]int{}, kept: map[string][][]string{}, pre: map[string][][]string{}}, nil
}

// CacheEntries is how many decoded entries a backend keeps (Config.Cache).
func (e *Env) CacheEntries() int { return e.cfg.Cache }

// Close releases the block cache; stores still open keep it until they
// close.
func (e *Env) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		e.closed = true
		e.cache.Unref()
	}
}

// totals count, over the process's life and every Env, the bytes and files
// checkpoints uploaded, restores downloaded, and restores took from local
// copies.
var totals struct {
	uploaded, uploadedFiles     atomic.Int64
	downloaded, downloadedFiles atomic.Int64
	linked, linkedFiles         atomic.Int64
}

// Metrics are the memory and disk the open stores use.
type Metrics struct {
	Stores        int   // open stores
	BlockCache    int64 // bytes in the shared block cache
	BlockCacheMax int64
	MemTables     int64 // bytes of memtables, all stores
	DiskBytes     int64 // bytes of table files, all stores
	// Uploaded, Downloaded and Linked count the bytes (and files) that
	// checkpoints uploaded, and that restores downloaded or took from
	// local copies, over the process's life.
	Uploaded, UploadedFiles     int64
	Downloaded, DownloadedFiles int64
	Linked, LinkedFiles         int64
}

// Totals returns the process's counts of bytes and files uploaded,
// downloaded and taken from local copies (the rest of Metrics is zero),
// whether an Env is open or not.
func Totals() Metrics {
	return Metrics{Uploaded: totals.uploaded.Load(), UploadedFiles: totals.uploadedFiles.Load(),
		Downloaded: totals.downloaded.Load(), DownloadedFiles: totals.downloadedFiles.Load(),
		Linked: totals.linked.Load(), LinkedFiles: totals.linkedFiles.Load()}
}

// Metrics returns the open stores' memory and disk.
func (e *Env) Metrics() Metrics {
	e.mu.Lock()
	stores := make([]*Store, 0, len(e.open))
	for s := range e.open {
		stores = append(stores, s)
	}
	e.mu.Unlock()
	m := Totals()
	m.Stores, m.BlockCache, m.BlockCacheMax = len(stores), e.cache.Size(), e.cache.MaxSize()
	for _, s := range stores {
		if pm := s.metrics(); pm != nil {
			m.MemTables += int64(pm.MemTable.Size)
			m.DiskBytes += int64(pm.DiskSpaceUsage())
		}
	}
	return m
}

func (e *Env) options() *pebble.Options {
	mem := e.cfg.MemTables / int64(e.cfg.Stores)
	mem = max(mem, 1<<20)
	o := &pebble.Options{
		Cache:               e.cache,
		MemTableSize:        uint64(mem),
		DisableWAL:          true, // a checkpoint is the durable copy; a store is rebuilt from it
		MaxManifestFileSize: 1 << 20,
		Logger:              quiet{},
		FS:                  noSyncFS{vfs.Default},
	}
	// Most reads of keyed state look up one key, often one not there
	// yet (a key's first record): bloom filters spare those the search
	// of every level.
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	// Small table files: a checkpoint uploads (and a restore downloads)
	// whole files, each read into memory once; after a compaction only
	// the files it rewrote are new.
	for i := range o.TargetFileSizes {
		o.TargetFileSizes[i] = 4 << 20
	}
	return o
}

// newDir returns a fresh directory name for a store.
func (e *Env) newDir(kind string) string {
	return filepath.Join(e.cfg.Dir, kind+"-"+randomID())
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (e *Env) register(s *Store) {
	e.mu.Lock()
	e.open[s] = struct{}{}
	e.mu.Unlock()
}

func (e *Env) unregister(s *Store) {
	e.mu.Lock()
	delete(e.open, s)
	e.mu.Unlock()
}

// localPath is where the local copy of shared file name is kept.
func (e *Env) localPath(name string) string { return filepath.Join(e.cfg.Dir, "files", name) }

// prefetchedPath is where a prefetched copy of shared file name waits
// for a restore to check it.
func (e *Env) prefetchedPath(name string) string {
	return filepath.Join(e.cfg.Dir, "prefetched", name)
}

// keep records that the store known as key refers to the shared files
// names in its newest checkpoint. The local copies of the files its last
// two checkpoints name are kept; others it alone named are removed.
func (e *Env) keep(key string, names []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	sets := append(e.kept[key], names)
	for _, n := range names {
		e.local[n]++
	}
	for len(sets) > 2 {
		for _, n := range sets[0] {
			if e.local[n]--; e.local[n] <= 0 {
				delete(e.local, n)
				_ = os.Remove(e.localPath(n))
			}
		}
		sets = sets[1:]
	}
	e.kept[key] = sets
}

// keepPrefetched records the names a prefetch under key fetched and
// removes the prefetched copies only its prefetch before the last named.
func (e *Env) keepPrefetched(key string, names []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	sets := append(e.pre[key], names)
	for len(sets) > 2 {
		still := map[string]bool{}
		for _, set := range sets[1:] {
			for _, n := range set {
				still[n] = true
			}
		}
		for _, n := range sets[0] {
			if !still[n] {
				_ = os.Remove(e.prefetchedPath(n))
			}
		}
		sets = sets[1:]
	}
	e.pre[key] = sets
}

// quiet is Pebble's logger: errors reach the caller through return
// values; Pebble's informational lines would only fill the job's log.
type quiet struct{}

func (quiet) Infof(string, ...any)  {}
func (quiet) Errorf(string, ...any) {}
func (quiet) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}

// Dir returns the Env's local directory.
func (e *Env) Dir() string { return e.cfg.Dir }
