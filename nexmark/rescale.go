package nexmark

import (
	"encoding/binary"
	"fmt"

	"github.com/weir-stream/weir/connector"
)

// Rescale moves the positions of n old subtasks to another parallelism
// (connector.Rescaler). A position holds the next index of each of its
// subtask's generators, and the generators of subtask s of n are those
// k with k mod n == s; so the old positions together give the next index
// of every generator, and the new positions deal them out to the new
// subtasks in the same form. Every generator goes on from where its old
// subtask stood, so no event is generated twice or skipped; a new
// subtask whose generators stand at different places reads the one
// furthest behind first (see reader.level), which keeps its events in
// timestamp order.
func (s *source) Rescale(old []connector.Position, n int) ([]connector.Position, error) {
	if n < 1 || len(old) < 1 {
		return nil, fmt.Errorf("nexmark: cannot rescale %d positions to parallelism %d", len(old), n)
	}
	next := make([]int64, len(s.gens))
	for i, pos := range old {
		info := connector.SubtaskInfo{Subtask: i, Parallelism: len(old)}
		mine, err := decodePosition(pos, len(stride(len(s.gens), i, len(old))), info)
		if err != nil {
			return nil, err
		}
		for j, k := range stride(len(s.gens), i, len(old)) {
			next[k] = mine[j]
		}
	}
	out := make([]connector.Position, n)
	for j := range out {
		pos := connector.Position{}
		for _, k := range stride(len(s.gens), j, n) {
			pos = binary.AppendUvarint(pos, uint64(next[k]))
		}
		out[j] = pos
	}
	return out, nil
}

// stride returns the generators of subtask s of n, of count in all.
func stride(count, s, n int) []int {
	var out []int
	for k := s; k < count; k += n {
		out = append(out, k)
	}
	return out
}
