package file

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	"github.com/weir-stream/weir/connector"
)

// This file moves the sources' positions to another parallelism
// (connector.Rescaler).
//
// What an old subtask has left to read is a byte range of the
// concatenated files: from its position (or its split's start) to its
// split's end. Rescale lines these ranges up in file order and splits
// their bytes among the new subtasks as a fresh start splits the files:
// subtask j of n takes the j-th n-th of the remaining bytes, which may
// span several ranges, and reads the lines that start in its pieces, in
// file order. A range cut mid-line gives the line to the piece it starts
// in, as splits do. The position of such a subtask lists its ranges:
//
//	0x80 0x00, uvarint(len), then uvarint(start), uvarint(end) per range
//
// in global byte offsets; no position of a fresh split starts so, as 0x80
// 0x00 is a uvarint 0 that is not minimally encoded.

var rangesMark = []byte{0x80, 0x00}

// byteRange is the part [start, end) of the concatenated files: the
// lines that start in it.
type byteRange struct{ start, end int64 }

func isRanges(pos connector.Position) bool {
	return len(pos) >= len(rangesMark) && pos[0] == rangesMark[0] && pos[1] == rangesMark[1]
}

func encodeRanges(rs []byteRange) connector.Position {
	out := binary.AppendUvarint(slices.Clone(rangesMark), uint64(len(rs)))
	for _, r := range rs {
		out = binary.AppendUvarint(out, uint64(r.start))
		out = binary.AppendUvarint(out, uint64(r.end))
	}
	return out
}

// decodeRanges decodes a list of ranges and checks them against in.
func decodeRanges(pos connector.Position, in *input) ([]byteRange, error) {
	bad := fmt.Errorf("file: corrupt position %x: want a list of byte ranges within the %d bytes of the files", []byte(pos), in.total)
	data := pos[len(rangesMark):]
	k, n := binary.Uvarint(data)
	if n <= 0 || k > uint64(len(data)) {
		return nil, bad
	}
	data = data[n:]
	rs := make([]byteRange, 0, k)
	for range k {
		s, n := binary.Uvarint(data)
		if n <= 0 {
			return nil, bad
		}
		data = data[n:]
		e, m := binary.Uvarint(data)
		if m <= 0 || s > e || e > uint64(in.total) {
			return nil, bad
		}
		data = data[m:]
		rs = append(rs, byteRange{int64(s), int64(e)})
	}
	if len(data) > 0 {
		return nil, bad
	}
	return rs, nil
}

// seekRanges starts the reader at the first of rs; it moves on to the
// others as each ends (next).
func (r *lineReader) seekRanges(rs []byteRange) error {
	r.ranges = true
	r.rest = rs
	return r.nextRange()
}

// nextRange moves to the next range, or to the end when none is left.
func (r *lineReader) nextRange() error {
	r.close()
	if len(r.rest) == 0 {
		r.file, r.off, r.hi = len(r.in.paths), 0, 0
		return nil
	}
	next := r.rest[0]
	r.rest = r.rest[1:]
	r.hi = next.end
	return r.seekSplit(next.start)
}

// rangesFrom returns the ranges left from global offset at on: the rest of
// the current one and those after it.
func (r *lineReader) rangesFrom(at int64) connector.Position {
	var rs []byteRange
	if at < r.hi {
		rs = append(rs, byteRange{at, r.hi})
	}
	return encodeRanges(append(rs, r.rest...))
}

// Rescale splits what the old subtasks left to read among n new ones
// (connector.Rescaler).
func (s *linesSource) Rescale(old []connector.Position, n int) ([]connector.Position, error) {
	return rescale(s.paths, old, n)
}

// Rescale splits what the old subtasks left to read among n new ones
// (connector.Rescaler).
func (s *parsedSource[T]) Rescale(old []connector.Position, n int) ([]connector.Position, error) {
	return rescale(s.paths, old, n)
}

func rescale(paths []string, old []connector.Position, n int) ([]connector.Position, error) {
	if n < 1 || len(old) < 1 {
		return nil, fmt.Errorf("file: cannot rescale %d positions to parallelism %d", len(old), n)
	}
	in, err := statInput(paths)
	if err != nil {
		return nil, err
	}
	var left []byteRange
	for i, pos := range old {
		lo, hi := in.split(i, len(old))
		switch {
		case isRanges(pos):
			rs, err := decodeRanges(pos, in)
			if err != nil {
				return nil, err
			}
			left = append(left, rs...)
			continue
		case len(pos) > 0:
			file, off, err := decodePosition(pos)
			if err != nil {
				return nil, err
			}
			if file > len(in.paths) || file < len(in.paths) && off > in.sizes[file] {
				return nil, fmt.Errorf("file: position (file %d, byte %d) of subtask %d of %d is beyond the files", file, off, i, len(old))
			}
			lo = in.global(file, off)
		}
		left = append(left, byteRange{lo, hi})
	}
	left = slices.DeleteFunc(left, func(r byteRange) bool { return r.start >= r.end })
	slices.SortFunc(left, func(a, b byteRange) int { return cmp.Compare(a.start, b.start) })
	var total int64
	for _, r := range left {
		total += r.end - r.start
	}
	// cut returns where the j-th n-th of the remaining bytes starts, as
	// an offset into them.
	cut := func(j int) int64 {
		h, l := bits.Mul64(uint64(total), uint64(j))
		q, _ := bits.Div64(h, l, uint64(n))
		return int64(q)
	}
	out := make([]connector.Position, n)
	for j := range n {
		from, to := cut(j), cut(j+1)
		var rs []byteRange
		var seen int64 // remaining bytes before range r
		for _, r := range left {
			size := r.end - r.start
			if s, e := max(from, seen), min(to, seen+size); s < e {
				rs = append(rs, byteRange{r.start + s - seen, r.start + e - seen})
			}
			seen += size
		}
		out[j] = encodeRanges(rs)
	}
	return out, nil
}
