package lsm

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// File is a shared table file a manifest names: its name among the job's
// shared files, its name in the store's directory, its size and its
// Castagnoli CRC-32.
type File struct {
	Name   string
	Local  string
	Size   int64
	CRC32C uint32
}

// Manifest is what a store's checkpoint holds: its key groups, the shared
// table files, and the store's small private files (its MANIFEST,
// OPTIONS and markers) by local name with their contents.
type Manifest struct {
	KeyGroupStart, KeyGroupEnd int
	Files                      []File
	Private                    map[string][]byte
	// Uploaded is the bytes of Files the checkpoint uploaded (the others
	// earlier checkpoints did); not encoded.
	Uploaded int64
}

// Bytes is the size of the shared files m names.
func (m *Manifest) Bytes() int64 {
	n := int64(0)
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// ErrCorrupt is wrapped by the errors of a manifest that does not decode
// and of a file whose size or checksum is not the manifest's.
var ErrCorrupt = errors.New("lsm: corrupt checkpoint")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const manifestMagic = "WLSM\x01"

// Encode returns m's encoding.
func (m *Manifest) Encode() []byte {
	out := []byte(manifestMagic)
	out = binary.AppendUvarint(out, uint64(m.KeyGroupStart))
	out = binary.AppendUvarint(out, uint64(m.KeyGroupEnd))
	out = binary.AppendUvarint(out, uint64(len(m.Files)))
	for _, f := range m.Files {
		out = appendString(out, f.Name)
		out = appendString(out, f.Local)
		out = binary.AppendUvarint(out, uint64(f.Size))
		out = binary.BigEndian.AppendUint32(out, f.CRC32C)
	}
	names := make([]string, 0, len(m.Private))
	for n := range m.Private {
		names = append(names, n)
	}
	sort.Strings(names)
	out = binary.AppendUvarint(out, uint64(len(names)))
	for _, n := range names {
		out = appendString(out, n)
		out = appendString(out, string(m.Private[n]))
	}
	return out
}

// DecodeManifest decodes what Encode wrote.
func DecodeManifest(data []byte) (*Manifest, error) {
	if !bytes.HasPrefix(data, []byte(manifestMagic)) {
		return nil, fmt.Errorf("not a store manifest: %w", ErrCorrupt)
	}
	r := reader8{b: data[len(manifestMagic):]}
	m := &Manifest{KeyGroupStart: int(r.uvarint()), KeyGroupEnd: int(r.uvarint()), Private: map[string][]byte{}}
	n := r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		f := File{Name: r.string(), Local: r.string(), Size: int64(r.uvarint())}
		f.CRC32C = r.uint32()
		m.Files = append(m.Files, f)
	}
	n = r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		name := r.string()
		m.Private[name] = []byte(r.string())
	}
	if r.err != nil || len(r.b) > 0 {
		return nil, fmt.Errorf("store manifest: %w", ErrCorrupt)
	}
	for _, f := range m.Files {
		if !safeName(f.Name) || !safeName(f.Local) {
			return nil, fmt.Errorf("store manifest names file %q: %w", f.Name, ErrCorrupt)
		}
	}
	for name := range m.Private {
		if !safeName(name) {
			return nil, fmt.Errorf("store manifest names file %q: %w", name, ErrCorrupt)
		}
	}
	return m, nil
}

// safeName reports whether a file name from a manifest stays in its
// directory.
func safeName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, `/\`)
}

// Pending is a checkpoint taken but not yet uploaded.
type Pending struct {
	s   *Store
	dir string
}

// Checkpoint takes the synchronous part of a checkpoint: it writes the
// memtable out and hard-links the store's files into a checkpoint
// directory. Writes after it returns are not in the checkpoint.
func (s *Store) Checkpoint() (*Pending, error) {
	if err := s.db.Flush(); err != nil {
		return nil, fmt.Errorf("lsm: checkpoint: %w", err)
	}
	dir := s.env.newDir("chk")
	if err := s.db.Checkpoint(dir); err != nil {
		return nil, fmt.Errorf("lsm: checkpoint: %w", err)
	}
	return &Pending{s: s, dir: dir}, nil
}

// Upload puts the checkpoint's table files that are not shared yet into
// files and returns its manifest and the names of the shared files it
// refers to. It runs on any goroutine, and removes the checkpoint
// directory, keeping local copies of the files for a local recovery.
func (p *Pending) Upload(ctx context.Context, files Files) (*Manifest, error) {
	defer os.RemoveAll(p.dir)
	s := p.s
	entries, err := os.ReadDir(p.dir)
	if err != nil {
		return nil, fmt.Errorf("lsm: upload: %w", err)
	}
	m := &Manifest{KeyGroupStart: s.kgStart, KeyGroupEnd: s.kgEnd, Private: map[string][]byte{}}
	var names []string
	for _, e := range entries {
		local := e.Name()
		path := filepath.Join(p.dir, local)
		if !strings.HasSuffix(local, ".sst") && !strings.HasSuffix(local, ".blob") {
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, fmt.Errorf("lsm: upload: %w", err)
			}
			m.Private[local] = data
			continue
		}
		s.mu.Lock()
		f, ok := s.uploaded[local]
		s.mu.Unlock()
		if !ok {
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, fmt.Errorf("lsm: upload: %w", err)
			}
			f = File{Name: s.id + "-" + local, Local: local, Size: int64(len(data)), CRC32C: crc32.Checksum(data, castagnoli)}
			if err := files.Put(ctx, f.Name, data); err != nil {
				return nil, fmt.Errorf("lsm: upload %s: %w", f.Name, err)
			}
			totals.uploaded.Add(f.Size)
			totals.uploadedFiles.Add(1)
			m.Uploaded += f.Size
			s.mu.Lock()
			s.uploaded[local] = f
			s.mu.Unlock()
		}
		if err := os.Link(path, s.env.localPath(f.Name)); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("lsm: keep a local copy: %w", err)
		}
		m.Files = append(m.Files, f)
		names = append(names, f.Name)
	}
	s.env.keep(s.key, names)
	return m, nil
}

// Discard removes a checkpoint that will not be uploaded.
func (p *Pending) Discard() { _ = os.RemoveAll(p.dir) }

// Shared returns the names of the shared files m refers to.
func (m *Manifest) Shared() []string {
	out := make([]string, len(m.Files))
	for i, f := range m.Files {
		out[i] = f.Name
	}
	return out
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// reader8 reads a manifest, remembering the first error.
type reader8 struct {
	b   []byte
	err error
}

func (r *reader8) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = ErrCorrupt
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader8) string() string {
	l := r.uvarint()
	if r.err != nil || uint64(len(r.b)) < l {
		r.err = ErrCorrupt
		return ""
	}
	s := string(r.b[:l])
	r.b = r.b[l:]
	return s
}

func (r *reader8) uint32() uint32 {
	if r.err != nil || len(r.b) < 4 {
		r.err = ErrCorrupt
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}
