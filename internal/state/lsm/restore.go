package lsm

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
)

// RestoreStats say where a restore found the files it needed.
type RestoreStats struct {
	Local, Downloaded           int   // files
	LocalBytes, DownloadedBytes int64 // their sizes
}

// Restore returns a store for key groups [kgStart, kgEnd) holding what
// the manifests hold of them: one manifest when the instance restores at
// its old parallelism, one per old instance whose key groups overlap its
// own after a rescale. The manifest with the most of its key groups is
// opened as the store; the key groups outside its range are deleted by
// range, and the entries of the others' key groups in range are copied
// in. Files come from local copies when the worker has them and are
// downloaded from files otherwise, each checked against its size and
// checksum; a mismatch is an error wrapping ErrCorrupt.
func (e *Env) Restore(ctx context.Context, files Files, key string, kgStart, kgEnd int, ms []*Manifest) (*Store, RestoreStats, error) {
	var st RestoreStats
	if len(ms) == 0 {
		s, err := e.Open(key, kgStart, kgEnd)
		return s, st, err
	}
	base := 0
	for i, m := range ms {
		if overlap(m, kgStart, kgEnd) > overlap(ms[base], kgStart, kgEnd) {
			base = i
		}
	}
	dir := e.newDir("db")
	if err := e.materialize(ctx, files, dir, ms[base], &st); err != nil {
		_ = os.RemoveAll(dir)
		return nil, st, err
	}
	uploaded := map[string]File{}
	var names []string
	for _, f := range ms[base].Files {
		uploaded[f.Local] = f
		names = append(names, f.Name)
	}
	e.keep(key, names) // the local copies restored, until later checkpoints replace them
	s, err := e.openAt(dir, key, kgStart, kgEnd, uploaded)
	if err != nil {
		return nil, st, err
	}
	fail := func(err error) (*Store, RestoreStats, error) {
		_ = s.Close()
		return nil, st, err
	}
	b := ms[base]
	if b.KeyGroupStart < kgStart {
		if err := s.db.DeleteRange(groupKey(b.KeyGroupStart), groupKey(kgStart), pebble.NoSync); err != nil {
			return fail(fmt.Errorf("lsm: restore: %w", err))
		}
	}
	if b.KeyGroupEnd > kgEnd {
		if err := s.db.DeleteRange(groupKey(kgEnd), groupKey(min(b.KeyGroupEnd, MetaGroup)), pebble.NoSync); err != nil {
			return fail(fmt.Errorf("lsm: restore: %w", err))
		}
	}
	for i, m := range ms {
		if i == base || overlap(m, kgStart, kgEnd) == 0 {
			continue
		}
		if err := e.copyIn(ctx, files, s, m, &st); err != nil {
			return fail(err)
		}
	}
	return s, st, nil
}

func overlap(m *Manifest, start, end int) int {
	return max(0, min(end, m.KeyGroupEnd)-max(start, m.KeyGroupStart))
}

// copyIn copies the entries of key groups [s's range] ∩ [m's range], and
// the table records, from the store m describes into s.
func (e *Env) copyIn(ctx context.Context, files Files, s *Store, m *Manifest, st *RestoreStats) error {
	dir := e.newDir("merge")
	defer os.RemoveAll(dir)
	if err := e.materialize(ctx, files, dir, m, st); err != nil {
		return err
	}
	o := e.options()
	o.ReadOnly = true
	db, err := pebble.Open(dir, o)
	if err != nil {
		return fmt.Errorf("lsm: restore: open %s: %w", dir, err)
	}
	defer db.Close()
	b := s.NewBatch()
	defer b.Close()
	put := func(k, v []byte) (bool, error) {
		b.Set(k, v)
		if b.Len() >= 4<<20 {
			return true, b.Commit()
		}
		return true, nil
	}
	lo, hi := max(s.kgStart, m.KeyGroupStart), min(s.kgEnd, m.KeyGroupEnd)
	if err := scan(db, groupKey(lo), groupKey(hi), put); err != nil {
		return err
	}
	if err := scan(db, groupKey(MetaGroup), nil, put); err != nil {
		return err
	}
	return b.Commit()
}

// materialize fills dir with the files of m: shared files linked from
// local copies or downloaded, private files written.
func (e *Env) materialize(ctx context.Context, files Files, dir string, m *Manifest, st *RestoreStats) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("lsm: restore: %w", err)
	}
	for _, f := range m.Files {
		dst := filepath.Join(dir, f.Local)
		fi, err := os.Stat(e.localPath(f.Name))
		if err != nil && e.usePrefetched(f) {
			fi, err = os.Stat(e.localPath(f.Name))
		}
		if err == nil && fi.Size() == f.Size {
			if err := os.Link(e.localPath(f.Name), dst); err == nil {
				st.Local++
				st.LocalBytes += f.Size
				totals.linked.Add(f.Size)
				totals.linkedFiles.Add(1)
				continue
			}
		}
		data, err := files.Get(ctx, f.Name)
		if err != nil {
			return fmt.Errorf("lsm: restore: shared file %s: %w", f.Name, err)
		}
		if err := f.check(data); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return fmt.Errorf("lsm: restore: %w", err)
		}
		// A local copy for the next restore on this worker.
		if err := os.Link(dst, e.localPath(f.Name)); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("lsm: restore: %w", err)
		}
		st.Downloaded++
		st.DownloadedBytes += f.Size
		totals.downloaded.Add(f.Size)
		totals.downloadedFiles.Add(1)
	}
	for name, data := range m.Private {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("lsm: restore: %w", err)
		}
	}
	return nil
}

// Prefetch downloads the named shared files that the worker has no local
// copy of, so that a later restore finds them locally: a passive standby's
// preparation for the subtasks it backs. The files are not checked here
// (the names carry no checksum); a restore checks a prefetched file
// against its manifest before it uses it. key names the set, as in Open:
// the local copies of its last two prefetches are kept.
func (e *Env) Prefetch(ctx context.Context, files Files, key string, names []string) (RestoreStats, error) {
	var st RestoreStats
	for _, n := range names {
		if !safeName(n) {
			return st, fmt.Errorf("lsm: prefetch: bad file name %q: %w", n, ErrCorrupt)
		}
		if _, err := os.Stat(e.localPath(n)); err == nil {
			continue
		}
		if _, err := os.Stat(e.prefetchedPath(n)); err == nil {
			continue
		}
		data, err := files.Get(ctx, n)
		if err != nil {
			return st, fmt.Errorf("lsm: prefetch %s: %w", n, err)
		}
		tmp := e.prefetchedPath(n) + ".tmp"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return st, fmt.Errorf("lsm: prefetch: %w", err)
		}
		if err := os.Rename(tmp, e.prefetchedPath(n)); err != nil {
			return st, fmt.Errorf("lsm: prefetch: %w", err)
		}
		st.Downloaded++
		st.DownloadedBytes += int64(len(data))
	}
	e.keepPrefetched(key, names)
	return st, nil
}

// usePrefetched turns a prefetched copy of f into a local copy if it
// matches the manifest; it reports whether it did.
func (e *Env) usePrefetched(f File) bool {
	data, err := os.ReadFile(e.prefetchedPath(f.Name))
	if err != nil {
		return false
	}
	if f.check(data) != nil {
		_ = os.Remove(e.prefetchedPath(f.Name))
		return false
	}
	err = os.Link(e.prefetchedPath(f.Name), e.localPath(f.Name))
	return err == nil || errors.Is(err, os.ErrExist)
}

// check returns an error wrapping ErrCorrupt unless data has f's size and
// checksum.
func (f File) check(data []byte) error {
	if int64(len(data)) != f.Size {
		return fmt.Errorf("shared file %s: %d bytes, the manifest says %d: %w", f.Name, len(data), f.Size, ErrCorrupt)
	}
	if got := crc32.Checksum(data, castagnoli); got != f.CRC32C {
		return fmt.Errorf("shared file %s: checksum mismatch: crc32c %08x, the manifest says %08x: %w", f.Name, got, f.CRC32C, ErrCorrupt)
	}
	return nil
}
