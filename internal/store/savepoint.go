package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/weir-stream/weir/internal/blob"
)

// A savepoint is a self-contained copy of one completed checkpoint,
// taken when a user asks for it, in a directory of its own that no
// retention deletes. Its layout (docs/savepoints.md):
//
//	<dir>/savepoint-<job>-<id>-<nonce>/_savepoint         the metadata
//	<dir>/savepoint-<job>-<id>-<nonce>/state/<vertex>-<subtask>  one task's state
//
// _savepoint is the checkpoint's Metadata in an envelope like a
// checkpoint's (magic "WSVP", its own format version), with every
// handle's key relative to the savepoint's directory, so the directory
// can be moved, copied or restored from anywhere. A state blob is the
// task's snapshot as the checkpoint holds it, in the backend-independent
// section format that docs/savepoints.md describes.

const (
	savepointMagic   = "WSVP"
	savepointVersion = 1
	savepointName    = "_savepoint"
	savepointPrefix  = "savepoint-"
)

// ExportSavepoint copies completed checkpoint m of this store into a new
// savepoint directory under dir (a directory or a blob URL, as blob.Open
// takes them) and returns the savepoint's location and its size in
// bytes. Every state blob is verified as it is read. The metadata is
// written last, create-if-absent: a savepoint without it does not exist.
func (c *Checkpoints) ExportSavepoint(ctx context.Context, m Metadata, dir string) (string, int64, error) {
	name := fmt.Sprintf("%s%s-%d-%s", savepointPrefix, m.Job, m.ID, NewRunID()[:8])
	loc := joinLocation(dir, name)
	to, err := blob.Open(ctx, loc)
	if err != nil {
		return "", 0, fmt.Errorf("savepoint of checkpoint %d: %w", m.ID, err)
	}
	sp := m
	sp.Tasks = nil
	var size int64
	for _, t := range m.Tasks {
		var data []byte
		for _, h := range t.Handles {
			b, err := c.ReadState(ctx, h)
			if err != nil {
				return "", 0, fmt.Errorf("savepoint of checkpoint %d: %w", m.ID, err)
			}
			data = append(data, b...)
		}
		h := Handle{Key: stateDir + taskName(t.Task), Size: int64(len(data)), CRC32C: checksum(data)}
		if err := to.Put(ctx, h.Key, data); err != nil {
			return "", 0, fmt.Errorf("savepoint of checkpoint %d: writing %s: %w", m.ID, loc, err)
		}
		size += h.Size
		sp.Tasks = append(sp.Tasks, TaskState{Task: t.Task, Handles: []Handle{h}})
	}
	data, err := encodeEnvelope(savepointMagic, savepointVersion, &sp)
	if err != nil {
		return "", 0, fmt.Errorf("savepoint of checkpoint %d: %w", m.ID, err)
	}
	if err := to.PutIfAbsent(ctx, savepointName, data); err != nil {
		return "", 0, fmt.Errorf("savepoint of checkpoint %d: writing %s/%s: %w", m.ID, loc, savepointName, err)
	}
	return loc, size + int64(len(data)), nil
}

// IsSavepoint reports whether path names a savepoint rather than a
// checkpoint: its directory (or the _savepoint file in it), which
// ExportSavepoint names savepoint-<job>-<id>-<nonce>.
func IsSavepoint(path string) bool {
	p := strings.TrimSuffix(strings.TrimSuffix(path, "/"), "/"+savepointName)
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	base := p[strings.LastIndexByte(p, '/')+1:]
	return strings.HasPrefix(base, savepointPrefix) || strings.HasSuffix(path, "/"+savepointName)
}

// LoadSavepoint returns the metadata of the savepoint at path, verified
// as Load verifies a checkpoint's, with every handle based at the
// savepoint's location, so that ReadState reads its state from there.
// A missing or damaged savepoint is an error naming the path; one written
// in a later format version says which version this build reads.
func (c *Checkpoints) LoadSavepoint(ctx context.Context, path string) (Metadata, error) {
	loc := strings.TrimSuffix(strings.TrimSuffix(path, "/"), "/"+savepointName)
	from, err := blob.Open(ctx, loc)
	if err != nil {
		return Metadata{}, fmt.Errorf("savepoint %s: %w", path, err)
	}
	data, err := from.Get(ctx, savepointName)
	if errors.Is(err, blob.ErrNotFound) {
		return Metadata{}, fmt.Errorf("savepoint %s: there is no %s in it (is it a savepoint directory?): %w", path, savepointName, err)
	}
	if err != nil {
		return Metadata{}, fmt.Errorf("savepoint %s: %w", path, err)
	}
	var m Metadata
	if err := decodeEnvelope(savepointMagic, savepointVersion, data, &m); err != nil {
		return Metadata{}, corrupt(loc+"/"+savepointName, "%v", err)
	}
	if err := m.validate(); err != nil {
		return Metadata{}, corrupt(loc+"/"+savepointName, "inconsistent: %v", err)
	}
	for i := range m.Tasks {
		for j := range m.Tasks[i].Handles {
			h := &m.Tasks[i].Handles[j]
			attrs, err := blob.Stat(ctx, from, h.Key)
			if err != nil || attrs.Size != h.Size {
				return Metadata{}, corrupt(loc+"/"+h.Key, "state blob is missing or has another size than the savepoint records (%d bytes)", h.Size)
			}
			h.Base = loc
		}
	}
	return m, nil
}

// Savepoint reports whether m is a savepoint's metadata, as LoadSavepoint
// returns it: its state lies in the savepoint's directory.
func (m *Metadata) Savepoint() bool {
	for _, t := range m.Tasks {
		for _, h := range t.Handles {
			if h.Base != "" {
				return true
			}
		}
	}
	return false
}

// joinLocation appends name to the directory or URL dir, before a URL's
// query.
func joinLocation(dir, name string) string {
	q := ""
	if i := strings.IndexByte(dir, '?'); i >= 0 && strings.Contains(dir, "://") {
		dir, q = dir[:i], dir[i:]
	}
	return strings.TrimSuffix(dir, "/") + "/" + name + q
}

// bases opens the blob stores handles with a Base read from, once each.
type bases struct {
	mu     sync.Mutex
	stores map[string]blob.Store
}

func (b *bases) open(ctx context.Context, loc string) (blob.Store, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.stores[loc]; ok {
		return s, nil
	}
	s, err := blob.Open(ctx, loc)
	if err != nil {
		return nil, err
	}
	if b.stores == nil {
		b.stores = map[string]blob.Store{}
	}
	b.stores[loc] = s
	return s, nil
}
