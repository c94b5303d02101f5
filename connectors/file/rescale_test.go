package file

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
)

// readLines opens subtask i of n at pos and reads up to limit records (all,
// if limit < 0), 2 at a time, returning them with the reader's position.
func readLines(t *testing.T, src connector.Source[string], i, n int, pos connector.Position, limit int) ([]string, connector.Position) {
	t.Helper()
	return connectortest.ReadSome(t, src, i, n, pos, limit, 2)
}

// Positions taken at one parallelism and rescaled to another yield, read
// to the end, exactly the lines not read before, each subtask's in file
// order; rescaled positions rescale again.
func TestRescaledPositionsReadEveryRemainingLineOnceInOrder(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for f, count := range []int{37, 0, 1, 52} {
		var b strings.Builder
		for l := range count {
			fmt.Fprintf(&b, "%d-%03d%s\n", f, l, strings.Repeat("x", l%7)) // sorts in file order
		}
		p := filepath.Join(dir, fmt.Sprintf("in%d.txt", f))
		if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	const lines = 37 + 1 + 52
	src := Lines(paths...)
	for _, path := range [][]int{{2, 1}, {2, 3}, {2, 8}, {3, 2}, {2, 3, 5, 1}, {1, 4, 4}, {8, 3, 2}} {
		seen := map[string]int{}
		n := path[0]
		pos := make([]connector.Position, n)
		for step, next := range path[1:] {
			for i := range n {
				got, p := readLines(t, src, i, n, pos[i], 2*i+step+1)
				for _, l := range got {
					seen[l]++
				}
				pos[i] = p
			}
			var err error
			if pos, err = src.(connector.Rescaler).Rescale(pos, next); err != nil {
				t.Fatalf("%v: rescale to %d: %v", path, next, err)
			}
			n = next
		}
		for i := range n {
			got, end := readLines(t, src, i, n, pos[i], -1)
			if !slices.IsSorted(got) {
				t.Errorf("%v: subtask %d of %d read out of file order: %v", path, i, n, got)
			}
			for _, l := range got {
				seen[l]++
			}
			if rest, _ := readLines(t, src, i, n, end, -1); len(rest) != 0 {
				t.Errorf("%v: subtask %d reopened at its end read %v", path, i, rest)
			}
		}
		for l, k := range seen {
			if k != 1 {
				t.Errorf("%v: line %s read %d times", path, l, k)
			}
		}
		if len(seen) != lines {
			t.Errorf("%v: read %d distinct lines, want %d", path, len(seen), lines)
		}
	}
}

func TestRescaleRefusesACorruptPosition(t *testing.T) {
	p := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(p, []byte("a\nb\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := JSONLines[int](JSONOptions{}, p)
	for _, bad := range []connector.Position{{0x80}, {0x80, 0x00, 0x01, 0x05, 0x01}, {0x80, 0x00, 0x01, 0x00, 0x09}, {0x07, 0x00}} {
		if _, err := src.(connector.Rescaler).Rescale([]connector.Position{bad, nil}, 3); err == nil {
			t.Errorf("rescaling %x: no error", []byte(bad))
		}
	}
}
