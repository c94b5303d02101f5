package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/weir-stream/weir/internal/blob"
)

// listing is what one List of a job's checkpoint keys shows about one
// checkpoint id.
type listing struct {
	committed bool     // its metadata exists
	keys      []string // all its keys, metadata included, sorted
}

// verified remembers the checkpoints a Retain of this process found
// usable, so that the next Retain does not read and check them again:
// a checkpoint's metadata and state never change once committed, and
// each completion would otherwise verify every retained checkpoint anew
// (with 10,000 subtasks, decoding three metadata files and checking
// 30,000 state blobs per second). Marking a checkpoint unusable or
// deleting it forgets it. A new process verifies from scratch.
type verified struct {
	mu  sync.Mutex
	ids map[verifiedID]bool
}

type verifiedID struct {
	job string
	id  uint64
}

func (v *verified) has(job string, id uint64) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.ids[verifiedID{job, id}]
}

func (v *verified) add(job string, id uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ids == nil {
		v.ids = map[verifiedID]bool{}
	}
	v.ids[verifiedID{job, id}] = true
}

func (v *verified) forget(job string, id uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.ids, verifiedID{job, id})
}

// scan lists the checkpoint keys of job, grouped by checkpoint id. Keys
// that are not part of the layout are ignored.
func (c *Checkpoints) scan(ctx context.Context, job string) (map[uint64]*listing, error) {
	if err := checkJob(job); err != nil {
		return nil, err
	}
	keys, err := c.blobs.List(ctx, checkpointsPrefix(job))
	if err != nil {
		return nil, fmt.Errorf("list checkpoints of job %q: %w", job, err)
	}
	byID := map[uint64]*listing{}
	for _, k := range keys {
		p, ok := parseKey(job, k)
		if !ok {
			continue
		}
		l := byID[p.id]
		if l == nil {
			l = &listing{}
			byID[p.id] = l
		}
		l.committed = l.committed || p.metadata
		l.keys = append(l.keys, k)
	}
	return byID, nil
}

// Committed returns the ids of the committed checkpoints of job (those
// whose metadata exists, intact or not) in increasing order.
func (c *Checkpoints) Committed(ctx context.Context, job string) ([]uint64, error) {
	byID, err := c.scan(ctx, job)
	if err != nil {
		return nil, err
	}
	return committed(byID), nil
}

// committed returns the ids of the committed checkpoints in byID in
// increasing order.
func committed(byID map[uint64]*listing) []uint64 {
	var ids []uint64
	for id, l := range byID {
		if l.committed {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Retain deletes old checkpoints of job, keeping the newest n (n >= 1)
// that Load accepts and every committed checkpoint newer than the oldest
// of those, usable or not; it deletes every committed checkpoint older
// than that. With fewer than n usable checkpoints it deletes nothing, so
// corruption of new checkpoints never costs the old ones. It returns the
// ids it deleted, oldest first.
//
// Each checkpoint goes metadata first, so a crash midway leaves an
// uncommitted checkpoint (never a committed one with missing state), whose
// remains DeleteUncommitted removes later. Any error other than a failed
// verification stops Retain before it deletes anything more.
//
// The coordinator calls it after a Commit. Loading a checkpoint that
// Retain deletes fails, so nothing may restore from a checkpoint older
// than the retained ones while it runs.
func (c *Checkpoints) Retain(ctx context.Context, job string, n int) ([]uint64, error) {
	if n < 1 {
		return nil, fmt.Errorf("store: retain %d checkpoints of job %q: must keep at least one", n, job)
	}
	byID, err := c.scan(ctx, job)
	if err != nil {
		return nil, err
	}
	ids := committed(byID)
	usable, cut := 0, -1
	for i := len(ids) - 1; i >= 0 && cut < 0; i-- {
		var err error
		if !c.verified.has(job, ids[i]) {
			if _, err = c.Load(ctx, job, ids[i]); err == nil {
				c.verified.add(job, ids[i])
			}
		}
		switch {
		case err == nil:
			usable++
			if usable == n {
				cut = i
			}
		case !unusable(err):
			return nil, fmt.Errorf("retain checkpoints of job %q: %w", job, err)
		}
	}
	if cut < 0 {
		return nil, nil
	}
	var deleted []uint64
	shared := map[string]bool{}
	for _, id := range ids[:cut] {
		names, err := c.sharedOf(ctx, job, id)
		if err == nil {
			maps.Copy(shared, names)
		}
		if err := c.delete(ctx, job, id, byID[id].keys); err != nil {
			return deleted, err
		}
		deleted = append(deleted, id)
	}
	if err := c.releaseShared(ctx, job, shared, ids[cut:]); err != nil {
		return deleted, fmt.Errorf("retain checkpoints of job %q: %w", job, err)
	}
	return deleted, nil
}

// DeleteUncommitted deletes the state blobs of job's checkpoints that
// have no metadata and an id of at most keepAbove, and returns their ids,
// oldest first. Such blobs are the remains of aborted checkpoints and of
// interrupted deletions.
//
// The caller must pass a keepAbove below every checkpoint still in flight
// (one that may yet be committed), such as the newest committed id or the
// oldest pending id minus one: a checkpoint's blobs exist before its
// metadata does, and deleting them would break it when it commits.
func (c *Checkpoints) DeleteUncommitted(ctx context.Context, job string, keepAbove uint64) ([]uint64, error) {
	byID, err := c.scan(ctx, job)
	if err != nil {
		return nil, err
	}
	var deleted []uint64
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		l := byID[id]
		if l.committed || id > keepAbove {
			continue
		}
		if err := c.delete(ctx, job, id, l.keys); err != nil {
			return deleted, err
		}
		deleted = append(deleted, id)
	}
	return deleted, nil
}

// delete removes the listed keys of checkpoint id, its metadata first.
func (c *Checkpoints) delete(ctx context.Context, job string, id uint64, keys []string) error {
	if err := c.checkFence(ctx); err != nil {
		return fmt.Errorf("delete checkpoint %d of job %q: %w", id, job, err)
	}
	c.verified.forget(job, id)
	meta := metadataKey(job, id)
	// The commit point goes first: a deletion cut short leaves no
	// checkpoint that names missing state.
	if err := c.blobs.Delete(ctx, meta); err != nil {
		return fmt.Errorf("delete checkpoint %d of job %q: %w", id, job, err)
	}
	rest := slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return k == meta })
	if err := blob.DeleteKeys(ctx, c.blobs, rest); err != nil {
		return fmt.Errorf("delete checkpoint %d of job %q: %w", id, job, err)
	}
	return nil
}
