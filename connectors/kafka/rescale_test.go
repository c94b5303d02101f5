package kafka

import (
	"maps"
	"testing"

	"github.com/weir-stream/weir/connector"
)

// Rescaled, every partition's offset goes to the one new subtask that
// owns it.
func TestRescaleGivesEachPartitionsOffsetToItsNewOwner(t *testing.T) {
	src := &source[string]{}
	all := map[tp]int64{}
	old := make([]connector.Position, 2)
	for i := range old {
		offs := map[tp]int64{}
		for _, topic := range []string{"a", "b"} {
			for p := range int32(5) {
				if owner(topic, p, 2) == i {
					offs[tp{topic, p}] = int64(100*i) + int64(p)
					all[tp{topic, p}] = offs[tp{topic, p}]
				}
			}
		}
		old[i] = encodePosition(offs)
	}
	for _, n := range []int{1, 3, 8} {
		pos, err := src.Rescale(old, n)
		if err != nil {
			t.Fatal(err)
		}
		got := map[tp]int64{}
		for j, p := range pos {
			offs, err := decodePosition(p)
			if err != nil {
				t.Fatal(err)
			}
			for part, off := range offs {
				if owner(part.topic, part.partition, n) != j {
					t.Errorf("n=%d: subtask %d got %v, which it does not own", n, j, part)
				}
				got[part] = off
			}
		}
		if !maps.Equal(got, all) {
			t.Errorf("n=%d: offsets %v, want %v", n, got, all)
		}
	}
	if _, err := src.Rescale([]connector.Position{{9}}, 2); err == nil {
		t.Error("a corrupt position rescaled")
	}
}
