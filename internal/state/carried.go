package state

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/weir-stream/weir/codec"
)

// A section restored but not claimed by a registration is carried into
// the next snapshot as it is, since only its part can decode it. After a
// restore at another parallelism such a section holds the entries of
// several old subtasks, of other key groups than this backend's too; the
// subtasks that own those key groups snapshot them as well, and may have
// changed them since. So a carried section is written as
//
//	name:  carriedPrefix + the part's name
//	body:  uvarint start, uvarint end, the section's data
//
// and a restore keeps only its entries of key groups [start, end): the
// carrier's own, of which it holds the only copy.

const carriedPrefix = "\x00carried\x00"

// carriedSection is a carried chunk as the next snapshot writes it.
type carriedSection struct {
	name string
	body []byte
}

// carried returns the restored chunks no registration claimed, sorted by
// name, each limited to this backend's key groups (schemas as they are;
// chunks with none of its key groups are dropped).
func (b *Backend) carried() []carriedSection {
	names := make([]string, 0, len(b.restored))
	for n := range b.restored {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []carriedSection
	for _, n := range names {
		if strings.HasPrefix(n, schemaPrefix) {
			out = append(out, carriedSection{name: n, body: b.restored[n][0].data})
			continue
		}
		for _, c := range b.restored[n] {
			start, end := b.owns(c)
			if start >= end {
				continue
			}
			if len(c.deltas) > 0 {
				out = append(out, carriedSection{name: carriedChainPrefix + n, body: appendCarriedChain(appendRange(nil, start, end), c)})
				continue
			}
			out = append(out, carriedSection{name: carriedPrefix + n, body: append(appendRange(nil, start, end), c.data...)})
		}
	}
	return out
}

// appendRange appends the key-group range that begins a carried
// section's body.
func appendRange(dst []byte, start, end int) []byte {
	dst = binary.AppendUvarint(dst, uint64(start))
	return binary.AppendUvarint(dst, uint64(end))
}

// readCarried decodes the body of a carried section.
func readCarried(body []byte) (chunk, error) {
	start, n := binary.Uvarint(body)
	if n <= 0 {
		return chunk{}, fmt.Errorf("bad key-group start: %w", codec.ErrCorrupt)
	}
	end, m := binary.Uvarint(body[n:])
	if m <= 0 || end < start || end > all {
		return chunk{}, fmt.Errorf("bad key-group end: %w", codec.ErrCorrupt)
	}
	return chunk{data: body[n+m:], start: int(start), end: int(end)}, nil
}
