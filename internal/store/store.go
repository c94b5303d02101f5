// Package store lays checkpoints out in a blob.Store and reads them back.
//
// A checkpoint is a set of state blobs, each written by one task
// (WriteState), plus one metadata blob listing them, written by the
// coordinator once every task has acknowledged (Commit). The metadata is
// the commit point: a checkpoint without metadata does not exist, and its
// state blobs are orphans for DeleteUncommitted. Commit creates the
// metadata only if it is absent, so a stale coordinator cannot replace a
// checkpoint that another one committed.
//
// Every read is verified: metadata by the length and checksum in its
// envelope, state by the size and CRC-32C its handle records. Latest
// passes over checkpoints that fail verification, says why, and returns
// the newest one that passes.
//
// All keys are built in keys.go.
package store

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/dataflow"
)

// Sentinel errors, wrapped with context naming the checkpoint or key.
// Errors from the blob store (including blob.ErrNotFound for a checkpoint
// that does not exist) are wrapped and passed on.
var (
	// ErrCorrupt means stored checkpoint data failed verification: a
	// metadata blob that is truncated, altered or inconsistent, or a state
	// blob that is missing or whose size or checksum differs from its
	// handle.
	ErrCorrupt = errors.New("corrupt checkpoint data")
	// ErrStale means Commit found the checkpoint already committed.
	ErrStale = errors.New("stale commit: checkpoint already committed")
	// ErrNoCheckpoint means a job has no checkpoint that passes
	// verification.
	ErrNoCheckpoint = errors.New("no usable checkpoint")
)

// Checkpoints reads and writes the checkpoints of any number of jobs in
// one blob store. Its methods are safe for concurrent use; the protocol
// rules on who may call what, and when, are in each method's comment.
type Checkpoints struct {
	blobs    blob.Store
	fence    Fence     // nil: unfenced (see Fenced)
	bases    *bases    // stores of handles with a Base (savepoints)
	verified *verified // checkpoints Retain has verified (retain.go)
}

// New returns checkpoint storage over blobs.
func New(blobs blob.Store) *Checkpoints {
	return &Checkpoints{blobs: blobs, bases: &bases{}, verified: &verified{}}
}

// WriteState stores one task's state for checkpoint id of job and returns
// the handle to put in the checkpoint's metadata. Tasks call it while the
// checkpoint is in flight, before the coordinator commits it.
//
// Writing the same task's state for the same checkpoint again replaces
// it; a handle from the earlier write then fails ReadState's checksum, so
// a task retrying must report the new handle. shared names the job's
// shared files (SharedFiles) the state refers to.
func (c *Checkpoints) WriteState(ctx context.Context, job string, id uint64, task dataflow.SubtaskID, data []byte, shared ...string) (Handle, error) {
	if err := checkJob(job); err != nil {
		return Handle{}, err
	}
	if task.Vertex < 0 || task.Subtask < 0 {
		return Handle{}, fmt.Errorf("store: write state: bad task %s", taskName(task))
	}
	h := Handle{Key: stateKey(job, id, task), Size: int64(len(data)), CRC32C: checksum(data), Shared: shared}
	if err := c.blobs.Put(ctx, h.Key, data); err != nil {
		return Handle{}, fmt.Errorf("write state of task %v for checkpoint %d: %w", task, id, err)
	}
	return h, nil
}

// ReadState returns the data of the state blob h names, after checking
// that its size and CRC-32C are the ones h records. A mismatch or a
// missing blob is an error wrapping ErrCorrupt that names the key.
func (c *Checkpoints) ReadState(ctx context.Context, h Handle) ([]byte, error) {
	from := c.blobs
	if h.Base != "" {
		var err error
		if from, err = c.bases.open(ctx, h.Base); err != nil {
			return nil, fmt.Errorf("read state from %s: %w", h.Base, err)
		}
	}
	key := h.Key
	if h.Base != "" {
		key = h.Base + "/" + h.Key
	}
	data, err := from.Get(ctx, h.Key)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, corrupt(key, "state blob is missing")
	}
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	if int64(len(data)) != h.Size {
		return nil, corrupt(key, "size %d, handle says %d", len(data), h.Size)
	}
	if got := checksum(data); got != h.CRC32C {
		return nil, corrupt(key, "checksum mismatch: crc32c %08x, handle says %08x", got, h.CRC32C)
	}
	return data, nil
}

// Commit completes checkpoint m.ID of m.Job by writing its metadata. The
// coordinator calls it once, after every task's state is written; the
// checkpoint exists from the moment Commit returns nil.
//
// The write is create-if-absent: if metadata for the id exists, Commit
// changes nothing and returns an error wrapping ErrStale, because the
// caller is a coordinator that lost its leadership or a duplicate. A
// Commit that failed with another error may still have written the
// metadata, and a retry then gets ErrStale; Load tells whether the stored
// metadata is the caller's. On storage returned by Fenced, an error
// wrapping ErrFenced means the caller was superseded: it must not tell
// the sinks to commit (fence.go says why the metadata may exist anyway).
func (c *Checkpoints) Commit(ctx context.Context, m Metadata) error {
	if err := m.validate(); err != nil {
		return fmt.Errorf("commit checkpoint %d: %w", m.ID, err)
	}
	data, err := encodeMetadata(&m)
	if err != nil {
		return fmt.Errorf("commit checkpoint %d: %w", m.ID, err)
	}
	if err := c.checkFence(ctx); err != nil {
		return fmt.Errorf("commit checkpoint %d of job %q: nothing written: %w", m.ID, m.Job, err)
	}
	key := metadataKey(m.Job, m.ID)
	err = c.blobs.PutIfAbsent(ctx, key, data)
	if errors.Is(err, blob.ErrExists) {
		return fmt.Errorf("commit checkpoint %d of job %q: %s exists: %w", m.ID, m.Job, key, ErrStale)
	}
	if err != nil {
		return fmt.Errorf("commit checkpoint %d of job %q: %w", m.ID, m.Job, err)
	}
	if err := c.checkFence(ctx); err != nil {
		return fmt.Errorf("commit checkpoint %d of job %q: its metadata is written, but the sinks must not commit it: %w", m.ID, m.Job, err)
	}
	return nil
}

// Load returns the metadata of checkpoint id of job after verifying the
// checkpoint: the metadata is intact and every state blob it lists exists
// with the recorded size (checksums are left to ReadState, which reads
// the data anyway). The error wraps blob.ErrNotFound if the checkpoint
// does not exist (has no metadata) and ErrCorrupt if it fails
// verification.
func (c *Checkpoints) Load(ctx context.Context, job string, id uint64) (Metadata, error) {
	if err := checkJob(job); err != nil {
		return Metadata{}, err
	}
	key := metadataKey(job, id)
	data, err := c.blobs.Get(ctx, key)
	if err != nil {
		return Metadata{}, fmt.Errorf("load checkpoint %d of job %q: %w", id, job, err)
	}
	m, err := decodeMetadata(data)
	if err != nil {
		return Metadata{}, corrupt(key, "%v", err)
	}
	if m.Job != job || m.ID != id {
		return Metadata{}, corrupt(key, "holds checkpoint %d of job %q", m.ID, m.Job)
	}
	why, err := c.blobs.Get(ctx, unusableKey(job, id))
	if err == nil {
		return Metadata{}, corrupt(unusableKey(job, id), "a restore found its state corrupt: %s", why)
	}
	if !errors.Is(err, blob.ErrNotFound) {
		return Metadata{}, fmt.Errorf("load checkpoint %d of job %q: %w", id, job, err)
	}
	for _, h := range m.Handles() {
		attrs, err := blob.Stat(ctx, c.blobs, h.Key)
		if errors.Is(err, blob.ErrNotFound) {
			return Metadata{}, corrupt(h.Key, "state blob is missing")
		}
		if err != nil {
			return Metadata{}, fmt.Errorf("load checkpoint %d of job %q: %w", id, job, err)
		}
		if attrs.Size != h.Size {
			return Metadata{}, corrupt(h.Key, "size %d, handle says %d", attrs.Size, h.Size)
		}
	}
	return m, nil
}

// LoadPath is Load for a checkpoint named by a path, as a user passes to
// --restore; ParsePath lists the accepted forms. The path is resolved
// within this store: its part before "jobs/" is ignored.
func (c *Checkpoints) LoadPath(ctx context.Context, path string) (Metadata, error) {
	job, id, err := ParsePath(path)
	if err != nil {
		return Metadata{}, err
	}
	return c.Load(ctx, job, id)
}

// Skip says why Latest passed over a committed checkpoint.
type Skip struct {
	ID uint64
	// Err wraps ErrCorrupt, or blob.ErrNotFound if the checkpoint was
	// deleted while Latest ran.
	Err error
}

func (s Skip) String() string { return fmt.Sprintf("checkpoint %d is unusable: %v", s.ID, s.Err) }

// Latest returns the newest checkpoint of job that Load accepts, with the
// newer committed checkpoints it passed over and why, newest first, so
// the caller can say "checkpoint 17 is unusable (...), restoring 16".
//
// It returns an error wrapping ErrNoCheckpoint if no checkpoint is
// usable (the skips say why). Any other error, such as an unreachable
// store, stops the search rather than falling back to an older checkpoint
// that a transient failure made look like the newest.
func (c *Checkpoints) Latest(ctx context.Context, job string) (Metadata, []Skip, error) {
	return c.LatestBefore(ctx, job, math.MaxUint64)
}

// LatestBefore is Latest among the checkpoints of job with an id below
// before: the checkpoint to fall back to when checkpoint before turned
// out unusable.
func (c *Checkpoints) LatestBefore(ctx context.Context, job string, before uint64) (Metadata, []Skip, error) {
	ids, err := c.Committed(ctx, job)
	if err != nil {
		return Metadata{}, nil, err
	}
	var skipped []Skip
	for i := len(ids) - 1; i >= 0; i-- {
		if ids[i] >= before {
			continue
		}
		m, err := c.Load(ctx, job, ids[i])
		if err == nil {
			return m, skipped, nil
		}
		if !unusable(err) {
			return Metadata{}, skipped, err
		}
		skipped = append(skipped, Skip{ID: ids[i], Err: err})
	}
	return Metadata{}, skipped, fmt.Errorf("job %q: %w", job, ErrNoCheckpoint)
}

// MarkUnusable records that checkpoint id of job cannot be restored
// because its state failed verification (why, an error wrapping
// ErrCorrupt from ReadState), which Load only finds by reading all of it.
// From then on Load, and so Latest and Retain, treat the checkpoint as
// corrupt: it is passed over, and retention keeps an older usable
// checkpoint in its place. Retention deletes the mark with the
// checkpoint.
func (c *Checkpoints) MarkUnusable(ctx context.Context, job string, id uint64, why error) error {
	if err := checkJob(job); err != nil {
		return err
	}
	c.verified.forget(job, id)
	if err := c.blobs.Put(ctx, unusableKey(job, id), []byte(why.Error())); err != nil {
		return fmt.Errorf("mark checkpoint %d of job %q unusable: %w", id, job, err)
	}
	return nil
}

// unusable reports whether err from Load means the checkpoint cannot be
// restored, as opposed to the attempt failing.
func unusable(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, blob.ErrNotFound)
}

// corrupt returns an error wrapping ErrCorrupt that names key.
func corrupt(key, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", key, fmt.Sprintf(format, args...), ErrCorrupt)
}
