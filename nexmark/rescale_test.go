package nexmark

import (
	"fmt"
	"testing"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
)

// readSome opens subtask i of n at pos and reads up to limit records (all,
// if limit < 0), 7 at a time, returning them with the reader's position.
func readSome(t *testing.T, src connector.Source[Event], i, n int, pos connector.Position, limit int) ([]Event, connector.Position) {
	t.Helper()
	return connectortest.ReadSome(t, src, i, n, pos, limit, 7)
}

// Positions taken at one parallelism and rescaled to another yield, read
// to the end, exactly the events not read before, each new subtask's in
// timestamp order; and rescaled positions rescale again.
func TestRescaledPositionsYieldEveryRemainingEventOnceInOrder(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumEvents = 1000
	cfg.NumEventGenerators = 10
	src, err := Source(cfg)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := readSome(t, src, 0, 1, nil, -1)
	want := map[string]bool{}
	for _, e := range all {
		want[fmt.Sprintf("%+v", e)] = true
	}
	if len(want) != int(cfg.NumEvents) {
		t.Fatalf("the source yields %d distinct events, want %d", len(want), cfg.NumEvents)
	}
	for _, path := range [][]int{{2, 1}, {2, 3}, {2, 8}, {3, 2}, {2, 3, 5, 1}, {1, 4, 4}, {8, 3, 2}, {2, 16, 3}} {
		seen := map[string]int{}
		n := path[0]
		pos := make([]connector.Position, n)
		for step, next := range path[1:] {
			for i := range n { // each subtask reads a different amount
				got, p := readSome(t, src, i, n, pos[i], 37*i+11*step+5)
				for _, e := range got {
					seen[fmt.Sprintf("%+v", e)]++
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
			for k := 1; k < len(got); k++ {
				if got[k].DateTime() < got[k-1].DateTime() {
					t.Errorf("%v: subtask %d of %d read event time %d after %d", path, i, n, got[k].DateTime(), got[k-1].DateTime())
					break
				}
			}
			for _, e := range got {
				seen[fmt.Sprintf("%+v", e)]++
			}
			if rest, _ := readSome(t, src, i, n, end, -1); len(rest) != 0 {
				t.Errorf("%v: subtask %d reopened at its end read %d events", path, i, len(rest))
			}
		}
		for e, c := range seen {
			if !want[e] {
				t.Errorf("%v: read an event the source never yields: %s", path, e)
			} else if c != 1 {
				t.Errorf("%v: event read %d times: %s", path, c, e)
			}
		}
		if len(seen) != len(want) {
			t.Errorf("%v: read %d distinct events, want %d", path, len(seen), len(want))
		}
	}
}

// A subtask restored at its own position reads on as the reader it was
// taken from would have: the position also says whose turn it is.
func TestReopenedReaderGoesOnInTheSameOrder(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumEvents = 500
	cfg.NumEventGenerators = 7
	src, err := Source(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := readSome(t, src, 1, 2, nil, -1)
	got, pos := readSome(t, src, 1, 2, nil, 23)
	rest, _ := readSome(t, src, 1, 2, pos, -1)
	got = append(got, rest...)
	if len(got) != len(want) {
		t.Fatalf("read %d events in two parts, want %d", len(got), len(want))
	}
	for k := range want {
		if fmt.Sprintf("%+v", got[k]) != fmt.Sprintf("%+v", want[k]) {
			t.Fatalf("event %d differs after the reopen: %+v, want %+v", k, got[k], want[k])
		}
	}
}

func TestRescaleRefusesACorruptPosition(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumEvents = 100
	cfg.NumEventGenerators = 4
	src, err := Source(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []connector.Position{{0x80}, {0x01}, {0x01, 0x02, 0x03}} {
		if _, err := src.(connector.Rescaler).Rescale([]connector.Position{bad, nil}, 3); err == nil {
			t.Errorf("rescaling %x: no error", []byte(bad))
		}
	}
}
