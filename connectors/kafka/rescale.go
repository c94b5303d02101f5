package kafka

import (
	"fmt"

	"github.com/weir-stream/weir/connector"
)

// Rescale moves the old subtasks' partition offsets to n subtasks
// (connector.Rescaler): every partition any old subtask held goes, with
// its offset, to the subtask of n that owns it (owner); a partition no old
// position names starts where the options' Start says, as at the same
// parallelism.
func (s *source[T]) Rescale(old []connector.Position, n int) ([]connector.Position, error) {
	if n < 1 {
		return nil, fmt.Errorf("kafka source: cannot rescale to parallelism %d", n)
	}
	per := make([]map[tp]int64, n)
	for i := range per {
		per[i] = map[tp]int64{}
	}
	for i, pos := range old {
		offs, err := decodePosition(pos)
		if err != nil {
			return nil, fmt.Errorf("subtask %d of %d: %w", i, len(old), err)
		}
		for p, off := range offs {
			per[owner(p.topic, p.partition, n)][p] = off
		}
	}
	out := make([]connector.Position, n)
	for j, offs := range per {
		out[j] = encodePosition(offs)
	}
	return out, nil
}
