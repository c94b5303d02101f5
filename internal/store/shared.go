package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/weir-stream/weir/internal/blob"
)

// SharedFiles are the state files of one job that several checkpoints
// share: an LSM store's table files, uploaded once by the first
// checkpoint that holds them (package internal/state/lsm). A checkpoint's
// handles name the files its state refers to (Handle.Shared); Retain
// deletes a file when it deletes the last retained checkpoint that names
// it. Savepoints never refer to them: a savepoint holds its state in the
// format every backend reads.
type SharedFiles struct {
	c   *Checkpoints
	job string
}

// Shared returns the shared files of job.
func (c *Checkpoints) Shared(job string) *SharedFiles { return &SharedFiles{c: c, job: job} }

// CopyShared copies the shared files checkpoint m names into the shared
// area of job, those not there yet: for a restore of a checkpoint taken
// under another job name, whose restored stores then refer to them.
func (c *Checkpoints) CopyShared(ctx context.Context, m *Metadata, job string) error {
	for _, h := range m.Handles() {
		for _, n := range h.Shared {
			if _, err := c.blobs.Get(ctx, sharedKey(job, n)); err == nil {
				continue
			}
			data, err := c.blobs.Get(ctx, sharedKey(m.Job, n))
			if err != nil {
				return fmt.Errorf("copying shared state file %s of job %q: %w", n, m.Job, err)
			}
			if err := c.blobs.Put(ctx, sharedKey(job, n), data); err != nil {
				return fmt.Errorf("copying shared state file %s into job %q: %w", n, job, err)
			}
		}
	}
	return nil
}

// Put stores a shared file.
func (f *SharedFiles) Put(ctx context.Context, name string, data []byte) error {
	if err := f.c.blobs.Put(ctx, sharedKey(f.job, name), data); err != nil {
		return fmt.Errorf("store shared state file: %w", err)
	}
	return nil
}

// Get returns a shared file; a missing one is an error wrapping
// ErrCorrupt, since a checkpoint that names it cannot be restored.
func (f *SharedFiles) Get(ctx context.Context, name string) ([]byte, error) {
	key := sharedKey(f.job, name)
	data, err := f.c.blobs.Get(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, corrupt(key, "shared state file is missing")
	}
	if err != nil {
		return nil, fmt.Errorf("read shared state file: %w", err)
	}
	return data, nil
}

// sharedOf returns the shared files checkpoint id of job names, read from
// its metadata whether the checkpoint is usable or not.
func (c *Checkpoints) sharedOf(ctx context.Context, job string, id uint64) (map[string]bool, error) {
	data, err := c.blobs.Get(ctx, metadataKey(job, id))
	if err != nil {
		return nil, err
	}
	m, err := decodeMetadata(data)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, h := range m.Handles() {
		for _, n := range h.Shared {
			out[n] = true
		}
	}
	return out, nil
}

// releaseShared deletes the shared files that the deleted checkpoints
// named and no kept one does. Files of checkpoints in flight are safe:
// every file a checkpoint names that an older one named too is in the
// newest completed checkpoint as well (a store's files, once dropped,
// never return), and that one is kept.
func (c *Checkpoints) releaseShared(ctx context.Context, job string, deleted map[string]bool, kept []uint64) error {
	if len(deleted) == 0 {
		return nil
	}
	for _, id := range kept {
		names, err := c.sharedOf(ctx, job, id)
		if err != nil {
			// Without the kept checkpoint's list, deleting any file could
			// break it: keep them all this time.
			return fmt.Errorf("shared state files of checkpoint %d: %w", id, err)
		}
		for n := range names {
			delete(deleted, n)
		}
	}
	var errs []error
	for n := range deleted {
		if err := c.blobs.Delete(ctx, sharedKey(job, n)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// DeleteUnnamedShared deletes the shared files of job that no committed
// checkpoint names, nor keep (the checkpoint a run restores, which may be
// another job's): the files uploaded for checkpoints that never completed.
// It must run when no store of the job runs, before a run starts: a
// running store may name a file in its next checkpoint that it uploaded
// for one that was aborted.
func (c *Checkpoints) DeleteUnnamedShared(ctx context.Context, job string, keep *Metadata) ([]string, error) {
	keys, err := c.blobs.List(ctx, sharedKey(job, ""))
	if err != nil || len(keys) == 0 {
		return nil, err
	}
	named := map[string]bool{}
	if keep != nil {
		for _, h := range keep.Handles() {
			for _, n := range h.Shared {
				named[n] = true
			}
		}
	}
	ids, err := c.Committed(ctx, job)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		names, err := c.sharedOf(ctx, job, id)
		if err != nil {
			return nil, fmt.Errorf("shared state files of checkpoint %d: %w", id, err)
		}
		maps.Copy(named, names)
	}
	var deleted []string
	for _, k := range keys {
		n := strings.TrimPrefix(k, sharedKey(job, ""))
		if named[n] {
			continue
		}
		if err := c.blobs.Delete(ctx, k); err != nil {
			return deleted, err
		}
		deleted = append(deleted, n)
	}
	return deleted, nil
}
