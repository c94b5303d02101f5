// Package blob is the storage under checkpoints: a flat namespace of keys,
// each naming an immutable-until-replaced byte string.
//
// Store is deliberately what an object store (S3, GCS, Azure Blob) offers
// and no more: whole-object put and get, conditional create, prefix
// listing and delete. There are no directories, appends, renames or
// partial reads, so an S3-compatible implementation (NewS3) fits beside
// the local directory (Dir), in-memory (Memory) and fault-injecting
// (Faulty) ones. Every implementation passes the conformance suite in
// package blobtest. Open turns a location a user writes (a path, a
// file:// or s3:// URL, memory://) into a store.
//
// Keys are slash-separated relative paths such as
// "jobs/wordcount/chk-000000000017/_metadata"; ValidKey states the rules.
// The layout of keys is not this package's business: internal/store
// builds all of them in one place.
package blob

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Sentinel errors. Implementations wrap them with context naming the key,
// so callers test with errors.Is.
var (
	// ErrNotFound means the key does not exist.
	ErrNotFound = errors.New("blob: not found")
	// ErrExists means PutIfAbsent found the key already present.
	ErrExists = errors.New("blob: already exists")
	// ErrInvalidKey means the key breaks the rules of ValidKey.
	ErrInvalidKey = errors.New("blob: invalid key")
)

// Store is a namespace of blobs. Its methods are safe for concurrent use.
//
// Every method returns an error wrapping ErrInvalidKey for a key that
// ValidKey rejects, and an error wrapping ctx.Err() if ctx is done before
// the operation takes effect. Other errors (I/O, network) are returned
// wrapped with the operation and key; the operation may or may not have
// taken effect.
//
// Two keys where one is the other plus "/..." (such as "a" and "a/b") must
// not both be stored: a store backed by a file system cannot hold both, and
// may reject the second Put. Callers lay out keys as a tree and never do it.
type Store interface {
	// Put stores data under key, replacing any existing blob. The
	// replacement is atomic: a concurrent or later Get returns the old
	// data or the new data, never a mix or a prefix. When Put returns
	// nil the blob is durable. Put does not retain data.
	Put(ctx context.Context, key string, data []byte) error

	// PutIfAbsent stores data under key only if key does not exist, and
	// returns an error wrapping ErrExists otherwise, leaving the existing
	// blob untouched. Of several concurrent PutIfAbsent calls for the same
	// key exactly one succeeds. The write is atomic and durable as in Put.
	// Callers use it to fence: a stale writer finds its key taken.
	PutIfAbsent(ctx context.Context, key string, data []byte) error

	// Get returns the whole blob stored under key, or an error wrapping
	// ErrNotFound. The caller owns the returned slice.
	Get(ctx context.Context, key string) ([]byte, error)

	// List returns the keys that start with prefix, sorted in increasing
	// byte order. The prefix is a plain string prefix, not a directory: it
	// may end in the middle of a segment ("jobs/a/chk-"). An empty prefix
	// lists everything. A prefix that no valid key can have yields an
	// empty list, not an error. Keys put or deleted while List runs may or
	// may not appear.
	List(ctx context.Context, prefix string) ([]string, error)

	// Delete removes key. Deleting a key that does not exist is not an
	// error, so Delete is idempotent and safe to retry.
	Delete(ctx context.Context, key string) error
}

// Attrs describes a stored blob without its data.
type Attrs struct {
	// Size is the blob's length in bytes.
	Size int64
}

// Stater is an optional ability of a Store: reading a blob's attributes
// without reading its data (an object store's HEAD request). Use the Stat
// function, which falls back to Get for stores without it.
type Stater interface {
	// Stat returns the attributes of the blob under key, or an error
	// wrapping ErrNotFound.
	Stat(ctx context.Context, key string) (Attrs, error)
}

// Stat returns the attributes of the blob under key in s, using s's Stat
// method if it has one and reading the whole blob otherwise. The error
// wraps ErrNotFound if the key does not exist.
func Stat(ctx context.Context, s Store, key string) (Attrs, error) {
	if st, ok := s.(Stater); ok {
		return st.Stat(ctx, key)
	}
	data, err := s.Get(ctx, key)
	if err != nil {
		return Attrs{}, err
	}
	return Attrs{Size: int64(len(data))}, nil
}

// KeysDeleter is an optional ability of a Store: deleting many keys in
// one call, with the effect of Delete on each (a missing key is no
// error) at less cost: a directory store syncs each directory once
// rather than once per key. Use the DeleteKeys function, which falls
// back to Delete for stores without it.
type KeysDeleter interface {
	// DeleteKeys deletes keys. The error joins those of the keys it could
	// not delete; it deleted the others.
	DeleteKeys(ctx context.Context, keys []string) error
}

// DeleteKeys deletes keys from s, using s's DeleteKeys method if it has
// one and Delete on each key otherwise. The error joins those of the
// keys it could not delete; the others are deleted.
func DeleteKeys(ctx context.Context, s Store, keys []string) error {
	if d, ok := s.(KeysDeleter); ok {
		return d.DeleteKeys(ctx, keys)
	}
	var errs []error
	for _, k := range keys {
		if err := s.Delete(ctx, k); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// MaxKeyLen is the longest key in bytes, the limit of S3 and GCS.
const MaxKeyLen = 1024

// ValidKey reports whether key may name a blob, returning nil or an error
// wrapping ErrInvalidKey that says what is wrong.
//
// A key is valid UTF-8 of at most MaxKeyLen bytes made of one or more
// segments separated by single slashes. It is relative: it does not start
// with a slash. No segment is empty (no "a//b", no trailing slash) or
// starts with a dot, which rules out "." and ".." (so a key cannot escape
// a directory store's root) and leaves dot names free for an
// implementation's own files. Backslashes and control characters are
// rejected because file systems treat them specially.
func ValidKey(key string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidKey, key, why)
	}
	switch {
	case key == "":
		return bad("empty key")
	case len(key) > MaxKeyLen:
		return bad(fmt.Sprintf("longer than %d bytes", MaxKeyLen))
	case !utf8.ValidString(key):
		return bad("not valid UTF-8")
	case strings.HasPrefix(key, "/"):
		return bad("absolute path; keys are relative")
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch {
		case seg == "":
			return bad("empty path segment")
		case seg == "." || seg == "..":
			return bad(fmt.Sprintf("%q segment", seg))
		case seg[0] == '.':
			return bad(fmt.Sprintf("segment %q starts with a dot", seg))
		}
		for _, r := range seg {
			if r == '\\' || r < 0x20 || r == 0x7f {
				return bad(fmt.Sprintf("segment %q holds a backslash or control character", seg))
			}
		}
	}
	return nil
}

// opError wraps err with the operation and key, the context every error
// from a Store carries.
func opError(op, key string, err error) error {
	return fmt.Errorf("%s %s: %w", op, key, err)
}
