package state

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/state/lsm"
)

// Incremental checkpoints of the memory backend. A table of a backend
// given the job's shared files (SetIncremental) keeps its checkpointed
// entries in a chain of immutable files there: a base holding every entry,
// then deltas holding the entries written or deleted since the snapshot
// before. A checkpoint's section of the table only names the chain, so a
// checkpoint encodes and writes what changed since the last one, not the
// whole state, and the checkpoint store keeps the files while a retained
// checkpoint names them (as it does an LSM store's).
//
// The table records which keys were written since its last snapshot
// (dirty). A delta snapshot copies those entries synchronously (the work is
// proportional to the changes, and maps are not frozen, so no key group is
// cloned on the next write); a full one freezes the maps as a snapshot in
// memory format does. A snapshot is full when the table has no chain (its
// first, or after a restore or an adoption), when a file of its chain
// failed to upload, when the chain holds maxDeltas deltas, or when its
// files add up to more than twice what the table's entries would encode
// to now: so a restore reads at most about twice the state. Deltas of new
// keys (a table that grows) hold nothing a restore reads in vain and do
// not make the next snapshot full; deltas that overwrite or delete keys
// do, once they add up to about the state.
//
// Each file of a chain is encoded and uploaded once, by the first encoder
// that needs it: its own snapshot's, or a later one's whose chain holds it
// (when the first never runs: an operator of the chain failed its
// snapshot, or an unaligned checkpoint was abandoned before its encoding).
// A file that failed to upload fails every snapshot whose chain holds it.
// Savepoints are never incremental: they are written in memory format,
// self-contained, and leave the chain as it was.

// maxDeltas bounds the deltas of a chain.
const maxDeltas = 16

// minChained is the default of Incremental.From.
const minChained = 1 << 20

// chainPrefix begins the name of a section that names a table's chain.
const chainPrefix = "\x00chain\x00"

// Incremental gives a memory backend the job's shared files, for
// incremental checkpoints of its tables.
type Incremental struct {
	// Files are the job's shared state files (the checkpoint store's).
	Files lsm.Files
	// From is the size in bytes of an encoding of all a table's entries
	// (its last, or an estimate: see chained) from which its checkpoints
	// are incremental: a smaller table
	// is written whole into the subtask's state at each checkpoint, which
	// costs less than a file of its own. Zero means 1 MiB; a negative
	// value makes every table incremental from its first checkpoint.
	From int64
	// Ctx bounds uploads and downloads.
	Ctx context.Context
}

// incremental is a backend's Incremental with the prefix that names its
// files.
type incremental struct {
	Incremental
	prefix string
	seq    int // files named so far; owner goroutine only
	// minChained is the size of a table's last full encoding from which
	// it chains (From).
	minChained int64
}

// SetIncremental makes the tables of memory backend b snapshot
// incrementally into o.Files. It is called before Restore (which reads
// the chains a snapshot names from o.Files); it does nothing for an LSM
// backend, whose store is incremental already.
func (b *Backend) SetIncremental(o Incremental) {
	if b.lsm != nil || o.Files == nil {
		return
	}
	if o.Ctx == nil {
		o.Ctx = context.Background()
	}
	var r [12]byte
	_, _ = rand.Read(r[:])
	from := o.From
	switch {
	case from == 0:
		from = minChained
	case from < 0:
		from = 0
	}
	b.inc = &incremental{Incremental: o, prefix: "mem-" + hex.EncodeToString(r[:]) + "-", minChained: from}
}

// name returns the name of a new file of the backend.
func (i *incremental) name() string {
	i.seq++
	return i.prefix + strconv.Itoa(i.seq)
}

// sharedFiles returns the job's shared files b reads chains from: its
// own, or an LSM backend's, which restores a memory checkpoint's chains
// into its store.
func (b *Backend) sharedFiles() (lsm.Files, context.Context) {
	switch {
	case b.inc != nil:
		return b.inc.Files, b.inc.Ctx
	case b.lsm != nil:
		return b.lsm.o.Files, b.lsm.o.Ctx
	}
	return nil, nil
}

// chainFile is a file of a chain as a snapshot names it.
type chainFile struct {
	name   string
	size   int64
	crc32c uint32
}

// chainLink is one file of a table's chain: its contents until they are
// uploaded, then its name, size and checksum.
type chainLink struct {
	once   sync.Once
	name   string
	encode func() []byte // the file's contents; nil once uploaded
	file   chainFile     // after upload, when err is nil
	err    error
	size   atomic.Int64 // bytes, once uploaded
	failed atomic.Bool
}

// upload encodes and uploads the link's file unless that was done; it
// returns the outcome of the one attempt, and the bytes this call
// uploaded.
func (l *chainLink) upload(inc *incremental) (uploaded int64, err error) {
	l.once.Do(func() {
		data := l.encode()
		l.encode = nil
		l.file = chainFile{name: l.name, size: int64(len(data)), crc32c: crc32.Checksum(data, castagnoli)}
		if err := inc.Files.Put(inc.Ctx, l.name, data); err != nil {
			l.err = fmt.Errorf("upload %s: %w", l.name, err)
			l.failed.Store(true)
			return
		}
		l.size.Store(l.file.size)
		uploaded = l.file.size
	})
	return uploaded, l.err
}

// chainShared is what a chain section names of the job's shared files:
// their names and bytes, and the bytes its encoding uploaded.
type chainShared struct {
	names           []string
	bytes, uploaded int64
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// needsFull reports whether a table whose chain is chain, and whose
// entries would encode to about live bytes now, takes a full snapshot
// next. A file not uploaded yet counts as empty.
func needsFull(chain []*chainLink, live int64) bool {
	if len(chain) == 0 || len(chain) > maxDeltas {
		return true
	}
	var files int64
	for _, l := range chain {
		if l.failed.Load() {
			return true
		}
		files += l.size.Load()
	}
	return files > 2*live
}

// encodeChain returns the function that uploads what chain's files need
// and appends the section naming them, with their names for the
// checkpoint's shared files.
func encodeChain(inc *incremental, chain []*chainLink) func(dst []byte) ([]byte, chainShared, error) {
	return func(dst []byte) ([]byte, chainShared, error) {
		sh := chainShared{names: make([]string, len(chain))}
		for i, l := range chain {
			n, err := l.upload(inc)
			if err != nil {
				return nil, chainShared{}, err
			}
			sh.names[i] = l.name
			sh.bytes += l.file.size
			sh.uploaded += n
		}
		dst = binary.AppendUvarint(dst, uint64(len(chain)))
		for _, l := range chain {
			dst = appendString(dst, l.file.name)
			dst = binary.AppendUvarint(dst, uint64(l.file.size))
			dst = binary.LittleEndian.AppendUint32(dst, l.file.crc32c)
		}
		return dst, sh, nil
	}
}

// readChain downloads the files a chain section names and checks them. A
// file missing or not as named is an error wrapping lsm.ErrCorrupt: the
// checkpoint cannot be restored.
func (b *Backend) readChain(name string, body []byte) (chunk, error) {
	files, ctx := b.sharedFiles()
	if files == nil {
		return chunk{}, fmt.Errorf("state %q: the snapshot keeps it in the job's shared state files, which this backend was not given", name)
	}
	n, k := binary.Uvarint(body)
	if k <= 0 || n == 0 {
		return chunk{}, fmt.Errorf("state %q: bad chain: %w", name, codec.ErrCorrupt)
	}
	body = body[k:]
	var c chunk
	for i := range n {
		fname, rest, err := readString(body)
		if err != nil {
			return chunk{}, fmt.Errorf("state %q: bad chain: %w", name, err)
		}
		size, k := binary.Uvarint(rest)
		if k <= 0 || len(rest) < k+4 {
			return chunk{}, fmt.Errorf("state %q: bad chain: %w", name, codec.ErrCorrupt)
		}
		crc := binary.LittleEndian.Uint32(rest[k:])
		body = rest[k+4:]
		data, err := files.Get(ctx, fname)
		if err != nil {
			return chunk{}, fmt.Errorf("state %q: %w: %w", name, lsm.ErrCorrupt, err)
		}
		if uint64(len(data)) != size || crc32.Checksum(data, castagnoli) != crc {
			return chunk{}, fmt.Errorf("state %q: file %s is not as the checkpoint names it (%d bytes, want %d, or its checksum): %w", name, fname, len(data), size, lsm.ErrCorrupt)
		}
		if i == 0 {
			c.data = data
		} else {
			c.deltas = append(c.deltas, data)
		}
	}
	c.end = all
	return c, nil
}

// delta entry operations.
const (
	deltaPut    byte = 0
	deltaDelete byte = 1
	deltaPatch  byte = 2 // entries of a key's map, set and removed (MapTable)
)

// deltaEntry is an entry a delta snapshot copied: a key's value, its
// deletion, or, for a MapTable, the entries of its map set (v) and
// removed (removed).
type deltaEntry[K comparable, V any] struct {
	kg      int
	k       K
	v       V
	removed V
	deleted bool
	patch   bool
}

// mark records that k of shard s was written, for the next delta. Only a
// table whose last snapshot chained can take a delta next: the others
// track nothing.
func (t *Table[K, V]) mark(s int, k K) {
	if len(t.chain) == 0 {
		return
	}
	d := t.dirty[s]
	if d == nil {
		d = map[K]struct{}{}
		t.dirty[s] = d
	}
	d[k] = struct{}{}
	if t.entries != nil {
		t.entries.whole(s, k)
	}
}

// forget forgets which keys and entries were written: a snapshot holds
// them.
func (t *Table[K, V]) forget() {
	for s, d := range t.dirty {
		// A map is kept, emptied, for the next snapshot's keys, so that it
		// does not grow again from nothing; unless a burst of writes made
		// it much larger than the writes since need.
		t.room[s] = max(t.room[s], len(d))
		if len(d)*8 < t.room[s] {
			t.dirty[s], t.room[s] = nil, 0
			continue
		}
		clear(d)
	}
	if t.entries != nil {
		t.entries.reset()
	}
}

// freezeChain is freeze for an incremental snapshot: it adds a file to
// the table's chain, full or delta (see needsFull), and returns the
// function that uploads the chain's files and names them.
func (t *Table[K, V]) freezeChain(inc *incremental) func(dst []byte) ([]byte, chainShared, error) {
	l := &chainLink{name: inc.name()}
	if needsFull(t.chain, int64(t.Len())*t.perEntry.Load()/256) {
		enc := t.freeze() // reserves its buffer (sizeFor)
		l.encode = func() []byte { return enc(nil) }
		t.chain = []*chainLink{l}
	} else {
		l.encode = t.captureDelta()
		t.chain = append(t.chain[:len(t.chain):len(t.chain)], l)
	}
	t.forget()
	return encodeChain(inc, t.chain)
}

// captureDelta copies the entries written since the last snapshot and
// returns the function that encodes them. Whole values are shared with
// the table afterwards, so GetMutable copies them on first access as
// after any snapshot; a MapTable's entries written one by one are copied
// out of their maps, which are not shared. A table whose values change in
// place (InPlace) is encoded at once.
func (t *Table[K, V]) captureDelta() func() []byte {
	n := 0
	for _, d := range t.dirty {
		n += len(d)
	}
	es := make([]deltaEntry[K, V], 0, n)
	shares := false
	// Shard by shard: a restore reads a delta's key groups in ascending
	// order, as a base's (restore).
	for s, d := range t.dirty {
		for k := range d {
			v, ok := t.shards[s][k]
			es = append(es, deltaEntry[K, V]{kg: t.kg(s), k: k, v: v, deleted: !ok})
			shares = shares || ok
		}
		if t.entries != nil {
			t.entries.patches(s, func(k K, puts, removed V) {
				es = append(es, deltaEntry[K, V]{kg: t.kg(s), k: k, v: puts, removed: removed, patch: true})
			})
		}
	}
	done := func() {}
	switch {
	case shares && !t.inPlace:
		done = t.hold()
	case t.pending.Load() == 0:
		t.release() // no encoding, this one included, shares a value
	}
	enc := func() []byte {
		defer done()
		per := &t.perDelta
		if per.Load() == 0 {
			per = &t.perEntry // the first delta: sized as the base's entries
		}
		dst := make([]byte, 0, sizeFor(per, len(es)))
		for _, e := range es {
			dst = binary.AppendUvarint(dst, uint64(e.kg))
			switch {
			case e.deleted:
				dst = append(dst, deltaDelete)
				dst = t.key.Append(dst, e.k)
				continue
			case e.patch:
				dst = append(dst, deltaPatch)
			default:
				dst = append(dst, deltaPut)
			}
			dst = t.key.Append(dst, e.k)
			dst = t.value.Append(dst, e.v)
			if e.patch {
				dst = t.value.Append(dst, e.removed)
			}
		}
		notePer(&t.perDelta, len(es), len(dst))
		return dst
	}
	if t.inPlace {
		data := enc()
		return func() []byte { return data }
	}
	return enc
}

// restoreChunk restores a chunk: its entries, then its deltas in order.
func (t *Table[K, V]) restoreChunk(c chunk, key codec.Codec[K], value codec.Codec[V]) error {
	start, end := t.b.owns(c)
	if err := t.restore(c.data, key, value, start, end, false); err != nil {
		return err
	}
	for i, d := range c.deltas {
		if err := t.restore(d, key, value, start, end, true); err != nil {
			return fmt.Errorf("delta %d: %w", i+1, err)
		}
	}
	return nil
}

// errChainWithoutDeltas is returned for a carried chain section without deltas.
var errChainWithoutDeltas = errors.New("a carried chain holds no deltas")

// A restored chain that no registration claimed is carried into the next
// snapshot inline, as a carried section (carried.go) whose data holds the
// base and the deltas: carriedChainPrefix + the part's name, then the
// key-group range, the number of files and each file length-prefixed.
const carriedChainPrefix = "\x00carried-chain\x00"

// appendCarriedChain appends the data of a carried chain section.
func appendCarriedChain(dst []byte, c chunk) []byte {
	dst = binary.AppendUvarint(dst, uint64(1+len(c.deltas)))
	dst = binary.AppendUvarint(dst, uint64(len(c.data)))
	dst = append(dst, c.data...)
	for _, d := range c.deltas {
		dst = binary.AppendUvarint(dst, uint64(len(d)))
		dst = append(dst, d...)
	}
	return dst
}

// readCarriedChain decodes a carried chain section's body.
func readCarriedChain(body []byte) (chunk, error) {
	c, err := readCarried(body)
	if err != nil {
		return chunk{}, err
	}
	data := c.data
	n, k := binary.Uvarint(data)
	if k <= 0 || n < 2 {
		return chunk{}, fmt.Errorf("%w: %w", errChainWithoutDeltas, codec.ErrCorrupt)
	}
	data = data[k:]
	parts := make([][]byte, n)
	for i := range parts {
		l, k := binary.Uvarint(data)
		if k <= 0 || uint64(len(data)-k) < l {
			return chunk{}, fmt.Errorf("truncated chain file: %w", codec.ErrCorrupt)
		}
		parts[i], data = data[k:k+int(l)], data[k+int(l):]
	}
	c.data, c.deltas = parts[0], parts[1:]
	return c, nil
}

// chainedPart is a part that snapshots incrementally into a chain.
type chainedPart interface {
	// chained reports whether the part keeps a chain: a table of a
	// backend given shared files, not in an LSM store.
	chained() bool
	freezeChain(inc *incremental) func(dst []byte) ([]byte, chainShared, error)
}

func isChained(p part) bool {
	c, ok := p.(chainedPart)
	return ok && c.chained()
}

// chained reports whether the table's next snapshot chains: it has a
// chain, or an encoding of all its entries would take at least the
// backend's minChained bytes, by its last full encoding or by its
// entries times their size in the last encoding (or, before any, in a
// sample of them), so that a table that grew large is encoded whole once,
// as its chain's base, and not once more before it.
func (t *Table[K, V]) chained() bool {
	if t.dirty == nil || t.l != nil {
		return false
	}
	from := t.b.inc.minChained
	if len(t.chain) > 0 || t.fullSize.Load() >= from {
		return true
	}
	per := t.perEntry.Load()
	if per == 0 {
		per = t.sampleSize()
		t.perEntry.Store(per) // sizes the buffer of the first encoding too (sizeFor)
	}
	return int64(t.Len())*per/256 >= from
}

// sampleEntries is how many entries sampleSize encodes.
const sampleEntries = 64

// sampleSize returns the bytes per entry, times 256, of an encoding of
// the table's first few entries; 0 for an empty table.
func (t *Table[K, V]) sampleSize() int64 {
	var buf []byte
	n := 0
	for s, m := range t.shards {
		for k, v := range m {
			buf = t.appendEntry(buf, t.kg(s), k, v)
			if n++; n == sampleEntries {
				return int64(len(buf)) * 256 / int64(n)
			}
		}
	}
	if n == 0 {
		return 0
	}
	return int64(len(buf)) * 256 / int64(n)
}
