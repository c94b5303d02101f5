// Package state holds the state of one operator instance: keyed tables
// and timers, with snapshots for checkpoints.
//
// Every piece of operator state lives here, behind one Backend per operator
// instance, so that a checkpoint snapshots all of it and a restore brings
// all of it back. The in-memory backend keeps Go values in maps.
//
// Snapshots are copy-on-write. Snapshot freezes every table synchronously
// (a constant amount of work per key group) and returns a function that
// encodes the frozen maps; the caller runs it on another goroutine while
// the operator goes on. A write to a frozen key group first copies that
// key group's map, so the encoder never sees a change. Values that are
// containers the operator mutates in place (maps, slices) are copied on
// their first mutation after a snapshot through GetMutable.
//
// Values that users' functions may change in place (an accumulator
// holding a map, see Mutable) cannot be copied on write: the engine does
// not see the write. Tables of such values (TableOptions.InPlace) are
// encoded by Snapshot itself, in the snapshot's synchronous part; the
// encoder then shares nothing with the running operator. Copying each
// value on its first access after a snapshot instead (Flink's
// copy-on-write state map) needs a generic deep copy; through the codec
// it costs two to four times the encode on the operator's goroutine, for
// every value touched between two checkpoints, and the encode on top
// (BenchmarkInPlaceValues). It would win only for large state of which
// few values change between checkpoints.
package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/lenprefix"
	"github.com/weir-stream/weir/internal/state/lsm"
)

// Backend is the state of one operator instance in one subtask. It is used
// from the subtask's goroutine only, except for the encoding functions that
// Snapshot returns.
type Backend struct {
	parts    map[string]part
	order    []string
	restored map[string][]chunk // sections of a restored snapshot not yet claimed
	adopted  []*Backend         // instances whose state this one took over (adopt.go)
	flatten  sync.Once          // of adopted into restored, when adopted in turn (adopt.go)
	epoch    uint64             // snapshots taken so far
	kgStart  int
	kgEnd    int
	maxPar   int
	lsm      *lsmBackend  // nil for the memory backend (lsmstate.go)
	inc      *incremental // a memory backend's incremental snapshots (chain.go)
	// syncBudget is the bytes of small tables the snapshot being taken
	// may still encode in its synchronous part (Table.freeze).
	syncBudget int64
}

// syncEncodeBudget is the bytes of small tables a snapshot encodes in its
// synchronous part rather than freezing them: a few milliseconds' work at
// most, and the size below which a table is written whole anyway
// (minChained).
const syncEncodeBudget = 1 << 20

// part is one named piece of state: a table or a timer set.
type part interface {
	// freeze captures the current contents and returns the function that
	// encodes them (appending to dst). It is called on the owner goroutine;
	// the returned function may run on another.
	freeze() func(dst []byte) []byte
	// view returns a function that encodes the current contents, which
	// must not change any more (a retired instance's, adopt.go), changing
	// nothing: instances that adopted it may call it concurrently.
	view() func(dst []byte) []byte
}

// schemaPart is a part that records the schemas of its keys and values
// (see schema.go).
type schemaPart interface {
	// schema returns the encoded partSchema; nil when there is none.
	schema() []byte
}

// NewBackend returns an empty backend for an operator instance owning key
// groups [kgStart, kgEnd) of maxPar.
func NewBackend(kgStart, kgEnd, maxPar int) *Backend {
	if kgEnd <= kgStart {
		kgStart, kgEnd = 0, 1
	}
	return &Backend{parts: map[string]part{}, kgStart: kgStart, kgEnd: kgEnd, maxPar: max(maxPar, 1)}
}

// Names returns the names of the registered parts, sorted.
func (b *Backend) Names() []string { return append([]string(nil), b.order...) }

// Epoch returns the number of snapshots taken. Code that caches references
// into state must drop them when it changes.
func (b *Backend) Epoch() uint64 { return b.epoch }

func (b *Backend) add(name string, p part) {
	b.parts[name] = p
	b.order = append(b.order, name)
	sort.Strings(b.order)
}

// chunk is a restored section's data, from one snapshot, with the key
// groups [start, end) whose entries in it count: all for a section its
// part wrote, the key groups of the backend that carried it for a
// carried one (see Snapshot).
type chunk struct {
	data       []byte
	deltas     [][]byte // a chain's deltas, applied after data in order (chain.go)
	start, end int
}

// all is the key-group range of a section a part wrote: its entries are
// its owner's.
const all = math.MaxInt32

// claim returns and forgets the restored chunks of name.
func (b *Backend) claim(name string) ([]chunk, bool) {
	cs, ok := b.restored[name]
	delete(b.restored, name)
	return cs, ok
}

// owns returns the key groups of c's entries this backend keeps.
func (b *Backend) owns(c chunk) (start, end int) {
	return max(c.start, b.kgStart), min(c.end, b.kgEnd)
}

// SnapshotOptions say what a snapshot is for.
type SnapshotOptions struct {
	// Savepoint asks for every table in the memory backend's format,
	// which every backend restores; an LSM backend otherwise snapshots
	// its store incrementally (lsmstate.go).
	Savepoint bool
}

// Encoded is an encoded snapshot and the names of the shared files it
// refers to (an LSM store's).
type Encoded struct {
	Data   []byte
	Shared []string
	// SharedBytes is the size of the shared files, Uploaded the bytes of
	// them this snapshot uploaded.
	SharedBytes, Uploaded int64
}

// Snapshot freezes all state and returns a function that encodes it,
// appending to dst: the Encoded it returns holds dst and the snapshot
// after it in Data. The function may run on any goroutine while the owner
// goes on changing state.
func (b *Backend) Snapshot(o SnapshotOptions) (func(dst []byte) (Encoded, error), error) {
	b.epoch++
	b.syncBudget = syncEncodeBudget
	var lf *lsmFrozen
	if b.lsm != nil {
		var err error
		if lf, err = b.lsmFreeze(o.Savepoint); err != nil {
			return nil, err
		}
	}
	encs := make([]func([]byte) ([]byte, error), len(b.order))
	chains := make([]func([]byte) ([]byte, chainShared, error), len(b.order))
	names := append([]string(nil), b.order...)
	schemas := map[string][]byte{}
	for i, n := range names {
		p := b.parts[n]
		var lt lsmTable
		if st, ok := p.(interface{ inStore() lsmTable }); ok {
			lt = st.inStore()
		}
		switch {
		case lt != nil && lf != nil && lf.view != nil:
			encs[i] = lt.canonical(lf.view)
		case lt != nil:
			// in the store's checkpoint
		case b.inc != nil && !o.Savepoint && isChained(p):
			chains[i] = p.(chainedPart).freezeChain(b.inc)
		default:
			enc := p.freeze()
			encs[i] = func(dst []byte) ([]byte, error) { return enc(dst), nil }
		}
		if sp, ok := p.(schemaPart); ok {
			if s := sp.schema(); len(s) > 0 {
				schemas[n] = s
			}
		}
	}
	// Sections restored but not claimed by any registration (state an
	// operator has not touched yet since the restore) are carried over,
	// each chunk marked with the key groups of its entries that are this
	// backend's: after a restore at another parallelism a chunk holds
	// entries of other subtasks' key groups, which their own snapshots
	// hold too, maybe changed since (carried.go).
	carried := b.carried()
	adopted := b.carriedAdopted()
	kgStart, kgEnd := b.kgStart, b.kgEnd
	var files LSMOptions
	if b.lsm != nil {
		files = b.lsm.o
	}
	return func(dst []byte) (e Encoded, err error) {
		if lf != nil && lf.view != nil {
			defer lf.view.Close()
		}
		var sections []section
		for i, n := range names {
			if encs[i] != nil {
				sections = append(sections, section{name: n, enc: encs[i]})
			}
			if enc := chains[i]; enc != nil {
				sections = append(sections, section{name: chainPrefix + n, enc: func(dst []byte) ([]byte, error) {
					dst, sh, err := enc(dst)
					e.Shared = append(e.Shared, sh.names...)
					e.SharedBytes += sh.bytes
					e.Uploaded += sh.uploaded
					return dst, err
				}})
			}
			if s, ok := schemas[n]; ok {
				sections = append(sections, section{name: schemaPrefix + n, body: s})
			}
		}
		for _, c := range carried {
			sections = append(sections, section{name: c.name, body: c.body})
		}
		for _, enc := range adopted {
			for _, c := range enc() {
				sections = append(sections, section{name: c.name, body: c.body})
			}
		}
		if lf != nil {
			for _, o := range lf.orphans {
				sections = append(sections, section{name: o.name, enc: func(dst []byte) ([]byte, error) {
					return appendCanonical(dst, lf.view, o.id, kgStart, kgEnd)
				}})
			}
			if lf.pending != nil {
				m, err := lf.pending.Upload(files.Ctx, files.Files)
				if err != nil {
					return Encoded{}, err
				}
				sections = append(sections, section{name: lsmSection, body: m.Encode()})
				e.Shared = append(e.Shared, m.Shared()...)
				e.SharedBytes += m.Bytes()
				e.Uploaded += m.Uploaded
			}
		}
		// Each section is encoded straight into dst, behind a length
		// filled in afterwards: encoding large state into a buffer of
		// its own and appending it would copy it once more.
		dst = binary.AppendUvarint(dst, uint64(len(sections)))
		for _, s := range sections {
			dst = appendString(dst, s.name)
			if s.enc == nil {
				dst = binary.AppendUvarint(dst, uint64(len(s.body)))
				dst = append(dst, s.body...)
				continue
			}
			var at int
			dst, at = lenprefix.Reserve(dst)
			if dst, err = s.enc(dst); err == nil {
				err = lenprefix.Fill(dst, at)
			}
			if err != nil {
				return Encoded{}, fmt.Errorf("state %q: %w", strings.TrimPrefix(s.name, carriedPrefix), err)
			}
		}
		e.Data = dst
		return e, nil
	}, nil
}

// section is a named section of a snapshot: its body, or the function
// that appends it.
type section struct {
	name string
	body []byte
	enc  func(dst []byte) ([]byte, error)
}

// Restore loads snapshots taken by Snapshot. Each part takes its section
// when it is registered. Several snapshots (from different old subtasks)
// may be given: keyed entries are filtered to this backend's key groups,
// which is how keyed state moves when parallelism changes. The sections
// recording parts' schemas (schema.go) are not concatenated: the
// snapshots must agree on them.
func (b *Backend) Restore(snapshots ...[]byte) error {
	if b.restored == nil {
		b.restored = map[string][]chunk{}
	}
	for _, data := range snapshots {
		if len(data) == 0 {
			continue
		}
		n, k := binary.Uvarint(data)
		if k <= 0 {
			return fmt.Errorf("state: corrupt snapshot header: %w", codec.ErrCorrupt)
		}
		data = data[k:]
		for range n {
			name, rest, err := readString(data)
			if err != nil {
				return fmt.Errorf("state: corrupt section name: %w", err)
			}
			l, k := binary.Uvarint(rest)
			if k <= 0 || uint64(len(rest)-k) < l {
				return fmt.Errorf("state: section %q is truncated: %w", name, codec.ErrCorrupt)
			}
			body := rest[k : k+int(l)] // read, not kept: no copy
			prev, ok := b.restored[name]
			switch {
			case ok && strings.HasPrefix(name, schemaPrefix):
				// Every subtask of a checkpoint records the same
				// schemas; the entries of one part cannot be read
				// under two.
				if !bytes.Equal(prev[0].data, body) {
					return fmt.Errorf("state %q: the snapshots record different schemas for it: %w", strings.TrimPrefix(name, schemaPrefix), codec.ErrCorrupt)
				}
			case name == lsmSection:
				if b.lsm == nil {
					return fmt.Errorf("state: the snapshot was taken with the pebble state backend: restore it with that backend, or restore a savepoint, which every backend reads: %w", codec.ErrIncompatible)
				}
				m, err := lsm.DecodeManifest(body)
				if err != nil {
					return fmt.Errorf("state: %w", err)
				}
				b.lsm.manifests = append(b.lsm.manifests, m)
			case strings.HasPrefix(name, chainPrefix):
				base := strings.TrimPrefix(name, chainPrefix)
				c, err := b.readChain(base, body)
				if err != nil {
					return err
				}
				b.restored[base] = append(b.restored[base], c)
			case strings.HasPrefix(name, carriedPrefix), strings.HasPrefix(name, carriedChainPrefix):
				prefix, read := carriedPrefix, readCarried
				if strings.HasPrefix(name, carriedChainPrefix) {
					prefix, read = carriedChainPrefix, readCarriedChain
				}
				base := strings.TrimPrefix(name, prefix)
				c, err := read(body)
				if err != nil {
					return fmt.Errorf("state: carried section %q: %w", base, err)
				}
				b.restored[base] = append(b.restored[base], c)
			default:
				b.restored[name] = append(prev, chunk{data: body, start: 0, end: all})
			}
			data = rest[k+int(l):]
		}
	}
	return nil
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func readString(src []byte) (string, []byte, error) {
	l, k := binary.Uvarint(src)
	if k <= 0 || uint64(len(src)-k) < l {
		return "", nil, codec.ErrCorrupt
	}
	return string(src[k : k+int(l)]), src[k+int(l):], nil
}
