package generator

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/weir-stream/weir/connector"
)

// This file moves a generator's positions to another parallelism
// (connector.Rescaler).
//
// A subtask's share of the index space is a set of splits, each an
// arithmetic sequence next, next+stride, ... below the source's count. A
// fresh subtask s of n has one, (s, n), and its position is the plain
// uvarint index. Rescale turns the old subtasks' splits into at least as
// many splits as new subtasks by cutting each into r finer ones
// (next+t·stride, stride·r for t < r), r chosen so that the count is a
// multiple of the new parallelism, and deals them out in index order. The
// position of a subtask that holds such splits is
//
//	0x00, uvarint(len), then uvarint(next), uvarint(stride) per split
//
// which no plain position is: a uvarint that starts with 0x00 is the one
// byte 0.

// split is an arithmetic sequence of indices: next, next+stride, ...
type split struct{ next, stride uint64 }

// isSplits reports whether pos lists splits rather than holding one index.
func isSplits(pos connector.Position) bool { return len(pos) > 1 && pos[0] == 0 }

func encodeSplits(splits []split) connector.Position {
	out := binary.AppendUvarint([]byte{0}, uint64(len(splits)))
	for _, s := range splits {
		out = binary.AppendUvarint(out, s.next)
		out = binary.AppendUvarint(out, s.stride)
	}
	return out
}

func decodeSplits(pos connector.Position) ([]split, error) {
	bad := fmt.Errorf("generator: corrupt position %x: want a list of splits", []byte(pos))
	data := pos[1:]
	k, n := binary.Uvarint(data)
	if n <= 0 || k > uint64(len(data)) {
		return nil, bad
	}
	data = data[n:]
	splits := make([]split, 0, k)
	for range k {
		next, n := binary.Uvarint(data)
		if n <= 0 {
			return nil, bad
		}
		data = data[n:]
		stride, n := binary.Uvarint(data)
		if n <= 0 || stride == 0 {
			return nil, bad
		}
		data = data[n:]
		splits = append(splits, split{next, stride})
	}
	if len(data) > 0 {
		return nil, bad
	}
	return splits, nil
}

// splitsLeft returns how many records, at most max, the splits still hold.
func (c *cursor) splitsLeft(max int) int {
	left := 0
	for _, s := range c.splits {
		if s.next < c.end {
			left += int(min(uint64(max-left), (c.end-1-s.next)/s.stride+1))
			if left == max {
				break
			}
		}
	}
	return left
}

// nextIndex returns the lowest next index of the splits and steps past
// it. The caller knows one is left (take).
func (c *cursor) nextIndex() uint64 {
	best := -1
	for i, s := range c.splits {
		if s.next < c.end && (best < 0 || s.next < c.splits[best].next) {
			best = i
		}
	}
	s := &c.splits[best]
	i := s.next
	s.next += s.stride
	return i
}

// splitsPosition lists the splits not yet exhausted.
func (c *cursor) splitsPosition() connector.Position {
	var left []split
	for _, s := range c.splits {
		if s.next < c.end {
			left = append(left, s)
		}
	}
	return encodeSplits(left)
}

// Rescale deals the rest of the old subtasks' indices out to n subtasks
// (connector.Rescaler).
func (s *source[T]) Rescale(old []connector.Position, n int) ([]connector.Position, error) {
	return rescale(old, n, s.count)
}

// Rescale deals the rest of the old subtasks' indices out to n subtasks
// (connector.Rescaler).
func (s *sequence) Rescale(old []connector.Position, n int) ([]connector.Position, error) {
	return rescale(old, n, s.count)
}

func rescale(old []connector.Position, n int, count int64) ([]connector.Position, error) {
	if n < 1 || len(old) < 1 {
		return nil, fmt.Errorf("generator: cannot rescale %d positions to parallelism %d", len(old), n)
	}
	end := uint64(count)
	if count < 0 {
		end = math.MaxInt64
	}
	var splits []split
	for i, pos := range old {
		if isSplits(pos) {
			ss, err := decodeSplits(pos)
			if err != nil {
				return nil, err
			}
			splits = append(splits, ss...)
			continue
		}
		c, err := openCursor(connector.SubtaskInfo{Subtask: i, Parallelism: len(old)}, pos, count, options{})
		if err != nil {
			return nil, err
		}
		splits = append(splits, split{c.next, c.stride})
	}
	splits = slices.DeleteFunc(splits, func(s split) bool { return s.next >= end })
	out := make([][]split, n)
	if len(splits) > 0 {
		r := uint64(n / gcd(len(splits), n))
		var fine []split
		for _, s := range splits {
			if s.stride > math.MaxUint64/r {
				return nil, fmt.Errorf("generator: position stride %d is too fine to split %d ways", s.stride, r)
			}
			for t := range r {
				if s.next+t*s.stride < end {
					fine = append(fine, split{s.next + t*s.stride, s.stride * r})
				}
			}
		}
		slices.SortFunc(fine, func(a, b split) int {
			if a.next != b.next {
				return cmpUint(a.next, b.next)
			}
			return cmpUint(a.stride, b.stride)
		})
		for q, s := range fine {
			out[q%n] = append(out[q%n], s)
		}
	}
	pos := make([]connector.Position, n)
	for i := range out {
		pos[i] = encodeSplits(out[i])
	}
	return pos, nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
