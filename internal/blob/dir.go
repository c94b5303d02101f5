package blob

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// DirStore is a Store over a local directory: key "a/b/c" is the file
// root/a/b/c. It is meant for a single machine or a shared POSIX file
// system with working rename(2), link(2) and fsync(2).
//
// Put writes a temporary file beside the target, fsyncs it, renames it
// over the target and fsyncs the directory, so a crash leaves the old or
// the new blob. PutIfAbsent does the same but publishes with link(2),
// which fails if the target exists; the file is complete before it has
// its name, so no reader sees a partial blob and exactly one of several
// racing writers wins. Directories are created as needed (and their
// parents fsynced) and removed by Delete once empty.
//
// Temporary files start with a dot, which no key segment may, so List
// never returns them; a crash may leave some behind, to be removed by
// hand or ignored.
type DirStore struct {
	root string
}

// Dir returns a store rooted at path, made absolute. The directory is
// created on the first Put; until then the store is empty.
func Dir(path string) *DirStore {
	// An absolute root keeps the store's meaning if the working directory
	// changes, and makes every file name start with the root.
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return &DirStore{root: filepath.Clean(path)}
}

// Root returns the directory the store is rooted at.
func (d *DirStore) Root() string { return d.root }

// path returns the file name of key after checking key and ctx.
func (d *DirStore) path(ctx context.Context, op, key string) (string, error) {
	if err := check(ctx, op, key); err != nil {
		return "", err
	}
	return filepath.Join(d.root, filepath.FromSlash(key)), nil
}

// Put implements Store.
func (d *DirStore) Put(ctx context.Context, key string, data []byte) error {
	p, err := d.path(ctx, "put", key)
	if err != nil {
		return err
	}
	tmp, err := d.writeTemp(filepath.Dir(p), data)
	if err != nil {
		return opError("put", key, err)
	}
	if err := os.Rename(tmp, p); err != nil {
		_ = os.Remove(tmp)
		d.prune(filepath.Dir(p))
		return opError("put", key, err)
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return opError("put", key, err)
	}
	return nil
}

// PutIfAbsent implements Store.
func (d *DirStore) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	p, err := d.path(ctx, "put-if-absent", key)
	if err != nil {
		return err
	}
	tmp, err := d.writeTemp(filepath.Dir(p), data)
	if err != nil {
		return opError("put-if-absent", key, err)
	}
	linkErr := os.Link(tmp, p)
	_ = os.Remove(tmp)
	if errors.Is(linkErr, fs.ErrExist) {
		return opError("put-if-absent", key, ErrExists)
	}
	if linkErr != nil {
		d.prune(filepath.Dir(p))
		return opError("put-if-absent", key, linkErr)
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return opError("put-if-absent", key, err)
	}
	return nil
}

// writeTemp writes data to a new fsynced temporary file in dir, creating
// dir if needed, and returns the file's name.
func (d *DirStore) writeTemp(dir string, data []byte) (string, error) {
	var f *os.File
	// A concurrent Delete removes directories it empties, so dir or one
	// of its new parents may vanish before the temporary file is in it;
	// then start again. Once the file is in dir, dir stays.
	for attempt := 0; ; attempt++ {
		err := d.mkdirs(dir)
		if err == nil {
			f, err = os.CreateTemp(dir, ".tmp-*")
			if err == nil {
				break
			}
		}
		if !errors.Is(err, fs.ErrNotExist) || attempt == 10 {
			d.prune(dir)
			return "", err
		}
	}
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		d.prune(dir)
		return "", err
	}
	return f.Name(), nil
}

// mkdirs creates dir and its missing parents up to the root, fsyncing the
// parent of each directory it creates so the new entry survives a crash.
func (d *DirStore) mkdirs(dir string) error {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	if dir == d.root || !strings.HasPrefix(dir, d.root) {
		return os.MkdirAll(dir, 0o755)
	}
	parent := filepath.Dir(dir)
	if err := d.mkdirs(parent); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncDir(parent)
}

// Get implements Store.
func (d *DirStore) Get(ctx context.Context, key string) ([]byte, error) {
	p, err := d.path(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, opError("get", key, notFound(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, opError("get", key, err)
	}
	if fi.IsDir() {
		return nil, opError("get", key, ErrNotFound)
	}
	// The file is never written in place (Put renames a new one over
	// it), so its size cannot change under the open descriptor.
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, opError("get", key, err)
	}
	return data, nil
}

// Stat implements Stater.
func (d *DirStore) Stat(ctx context.Context, key string) (Attrs, error) {
	p, err := d.path(ctx, "stat", key)
	if err != nil {
		return Attrs{}, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return Attrs{}, opError("stat", key, notFound(err))
	}
	if fi.IsDir() {
		return Attrs{}, opError("stat", key, ErrNotFound)
	}
	return Attrs{Size: fi.Size()}, nil
}

// List implements Store.
func (d *DirStore) List(ctx context.Context, prefix string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, opError("list", prefix, err)
	}
	// Walk only the directory named by the prefix's complete segments. If
	// they do not form a valid key, no valid key has the prefix (and
	// walking them could leave the root).
	start := d.root
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		if ValidKey(prefix[:i]) != nil {
			return nil, nil
		}
		start = filepath.Join(d.root, filepath.FromSlash(prefix[:i]))
	}
	var keys []string
	err := filepath.WalkDir(start, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if isNotFound(err) {
				return nil // removed while we walked: not listed
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if path == start {
			return nil
		}
		if strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil // a temporary file
		}
		rel, err := filepath.Rel(d.root, path)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if e.IsDir() {
			dir := key + "/"
			if !strings.HasPrefix(dir, prefix) && !strings.HasPrefix(prefix, dir) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, opError("list", prefix, err)
	}
	slices.Sort(keys)
	return keys, nil
}

// Delete implements Store.
func (d *DirStore) Delete(ctx context.Context, key string) error {
	return d.DeleteKeys(ctx, []string{key})
}

// DeleteKeys implements KeysDeleter: it removes the keys' files, then
// syncs each of their directories once and removes those left empty.
func (d *DirStore) DeleteKeys(ctx context.Context, keys []string) error {
	var errs []error
	dirs := map[string]bool{}
	for _, key := range keys {
		p, err := d.path(ctx, "delete", key)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		removed, err := unlink(p)
		if err != nil {
			errs = append(errs, opError("delete", key, err))
		}
		if removed {
			dirs[filepath.Dir(p)] = true
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(dirs)) {
		if err := syncDir(dir); err != nil && !isNotFound(err) {
			errs = append(errs, opError("delete", strings.TrimPrefix(dir, d.root+string(filepath.Separator)), err))
		}
		d.prune(dir)
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// unlink removes the file p and reports whether it did; a path that does
// not exist or is a directory is left alone, as no blob is there.
func unlink(p string) (bool, error) {
	err := syscall.Unlink(p)
	if err == nil {
		return true, nil
	}
	if isNotFound(err) {
		return false, nil
	}
	if fi, serr := os.Lstat(p); isNotFound(serr) || (serr == nil && fi.IsDir()) {
		return false, nil
	}
	return false, &os.PathError{Op: "unlink", Path: p, Err: err}
}

// prune removes dir and its parents up to the root while they are empty,
// so that neither a deletion nor a failed write (a full disk) leaves
// empty directories behind. It is best effort: rmdir fails on a
// directory that is not empty, which is how the walk up stops, and an
// empty directory left by a crash is harmless. A concurrent write that
// loses its new directory to it starts again (writeTemp).
func (d *DirStore) prune(dir string) {
	for ; dir != d.root && strings.HasPrefix(dir, d.root); dir = filepath.Dir(dir) {
		if syscall.Rmdir(dir) != nil {
			if _, err := os.Lstat(dir); err == nil {
				break // there, and not empty
			}
		}
	}
}

// syncDir fsyncs a directory so that entries created, renamed or removed
// in it survive a crash.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// isNotFound reports whether err means a path does not exist, including
// the case where one of its parents is a file.
func isNotFound(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// notFound returns ErrNotFound for the errors isNotFound accepts and err
// otherwise.
func notFound(err error) error {
	if isNotFound(err) {
		return ErrNotFound
	}
	return err
}
