package generator

import (
	"slices"
	"testing"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
)

// readSome opens subtask i of n at pos and reads up to limit records (all,
// if limit < 0), 3 at a time, returning them with the reader's position.
func readSome(t *testing.T, src connector.Source[int64], i, n int, pos connector.Position, limit int) ([]int64, connector.Position) {
	t.Helper()
	return connectortest.ReadSome(t, src, i, n, pos, limit, 3)
}

// Positions taken at one parallelism and rescaled to another yield, read
// to the end, exactly the records not read before, each subtask's in
// index order; and rescaled positions rescale again.
func TestRescaledPositionsYieldEveryRemainingRecordOnceInOrder(t *testing.T) {
	const count = 200
	src := Sequence(0, count)
	for _, path := range [][]int{{2, 1}, {2, 3}, {2, 8}, {3, 2}, {2, 3, 5, 1}, {1, 4, 4}, {8, 3, 2}} {
		seen := map[int64]int{}
		n := path[0]
		pos := make([]connector.Position, n)
		for step, next := range path[1:] {
			for i := range n { // each subtask reads a different amount
				got, p := readSome(t, src, i, n, pos[i], 3*i+step+1)
				for _, v := range got {
					seen[v]++
				}
				pos[i] = p
			}
			var err error
			if pos, err = src.(connector.Rescaler).Rescale(pos, next); err != nil {
				t.Fatalf("%v: rescale to %d: %v", path, next, err)
			}
			if len(pos) != next {
				t.Fatalf("%v: rescale to %d gave %d positions", path, next, len(pos))
			}
			n = next
		}
		for i := range n {
			got, end := readSome(t, src, i, n, pos[i], -1)
			if !slices.IsSorted(got) {
				t.Errorf("%v: subtask %d of %d read out of index order: %v", path, i, n, got)
			}
			for _, v := range got {
				seen[v]++
			}
			if rest, _ := readSome(t, src, i, n, end, -1); len(rest) != 0 {
				t.Errorf("%v: subtask %d reopened at its end read %v", path, i, rest)
			}
		}
		for v := range int64(count) {
			if seen[v] != 1 {
				t.Errorf("%v: record %d read %d times", path, v, seen[v])
			}
		}
		if len(seen) != count {
			t.Errorf("%v: read %d distinct records, want %d", path, len(seen), count)
		}
	}
}

// Rescaling spreads the remaining records evenly when the old subtasks
// stood at the same place.
func TestRescaleBalancesTheNewSubtasks(t *testing.T) {
	src := Sequence(0, 600)
	pos, err := src.(connector.Rescaler).Rescale([]connector.Position{nil, nil}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		got, _ := readSome(t, src, i, 3, pos[i], -1)
		if len(got) != 200 {
			t.Errorf("subtask %d of 3 reads %d records, want 200", i, len(got))
		}
	}
}

func TestRescaleRefusesACorruptPosition(t *testing.T) {
	src := Sequence(0, 10)
	for _, bad := range []connector.Position{{0x80}, {0x01, 0x00}, {0x00, 0x01}, {0x00, 0x01, 0x02, 0x00}} {
		if _, err := src.(connector.Rescaler).Rescale([]connector.Position{bad, nil}, 3); err == nil {
			t.Errorf("rescaling %x: no error", []byte(bad))
		}
	}
}
