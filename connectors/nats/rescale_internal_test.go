package nats

import (
	"fmt"
	"slices"
	"testing"

	"github.com/weir-stream/weir/connector"
)

// message is a stream message: its sequence and subject.
type message struct {
	seq     uint64
	subject string
}

// stream returns n messages spread unevenly over partitions parts.
func stream(n int, parts []string) []message {
	out := make([]message, n)
	for i := range out {
		out[i] = message{uint64(i + 1), parts[(i*7+i/3)%len(parts)] + ".x"}
	}
	return out
}

// readAt reads the messages subtask i of n of a source with partitions
// parts would return from pos, up to limit (all, if limit < 0), as the
// reader does with a consumer that delivers its partitions' messages in
// stream order from the cursor's next sequence on; it returns their
// sequences and the position after them.
func readAt(t *testing.T, msgs []message, parts []string, i, n int, pos connector.Position, limit int) ([]uint64, connector.Position) {
	t.Helper()
	next, table, err := decodePosition("s", pos)
	if err != nil {
		t.Fatalf("subtask %d of %d at %x: %v", i, n, pos, err)
	}
	r := &reader[int]{}
	var held []int
	for k := i; k < len(parts); k += n {
		r.filters = append(r.filters, parts[k])
		held = append(held, k)
	}
	r.cur = openCursor(next, table, held)
	var got []uint64
	for _, m := range msgs {
		if limit >= 0 && len(got) == limit {
			break
		}
		if m.seq < r.cur.next || !slices.ContainsFunc(r.filters, func(f string) bool { return subjectMatches(f, m.subject) }) {
			continue // the consumer does not deliver it
		}
		if r.cur.consume(r.partition(m.subject), m.seq) {
			got = append(got, m.seq)
		}
	}
	return got, r.cur.position()
}

// Positions taken at one parallelism and rescaled to another read, to the
// end, exactly the messages not read before, each new subtask's in stream
// order; and rescaled positions rescale again. Rescale never learns how
// many partitions there are.
func TestRescaledPositionsReadEveryRemainingMessageOnceInOrder(t *testing.T) {
	src := &Source[int]{opts: SourceOptions[int]{Stream: "s"}}
	for _, np := range []int{1, 4, 5, 12} {
		var parts []string
		for k := range np {
			parts = append(parts, fmt.Sprintf("s.p%d.>", k))
		}
		msgs := stream(300, parts)
		for _, path := range [][]int{{2, 1}, {2, 3}, {2, 8}, {3, 2}, {2, 3, 5, 1}, {1, 4, 4}, {8, 3, 2}, {2, 3, 8, 5, 7}} {
			name := fmt.Sprintf("%d partitions, %v", np, path)
			seen := map[uint64]int{}
			n := path[0]
			pos := make([]connector.Position, n)
			for step, next := range path[1:] {
				for i := range n { // each subtask reads a different amount
					got, p := readAt(t, msgs, parts, i, n, pos[i], 5*i+3*step+1)
					for _, s := range got {
						seen[s]++
					}
					pos[i] = p
				}
				var err error
				if pos, err = src.Rescale(pos, next); err != nil {
					t.Fatalf("%s: rescale to %d: %v", name, next, err)
				}
				if len(pos) != next {
					t.Fatalf("%s: rescale to %d gave %d positions", name, next, len(pos))
				}
				n = next
			}
			for i := range n {
				got, end := readAt(t, msgs, parts, i, n, pos[i], -1)
				if !slices.IsSorted(got) {
					t.Errorf("%s: subtask %d of %d read out of stream order: %v", name, i, n, got)
				}
				for _, s := range got {
					seen[s]++
				}
				if rest, _ := readAt(t, msgs, parts, i, n, end, -1); len(rest) != 0 {
					t.Errorf("%s: subtask %d reopened at its end read %v", name, i, rest)
				}
			}
			for _, m := range msgs {
				if seen[m.seq] != 1 {
					t.Errorf("%s: message %d read %d times", name, m.seq, seen[m.seq])
				}
			}
		}
	}
}

// Old subtasks that stood at the same sequence give plain positions:
// nothing to drop.
func TestRescaleOfLevelPositionsIsPlain(t *testing.T) {
	src := &Source[int]{opts: SourceOptions[int]{Stream: "s"}}
	pos, err := src.Rescale([]connector.Position{{7}, {7}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pos {
		if string(p) != "\x07" {
			t.Errorf("subtask %d: position %x, want 07", i, []byte(p))
		}
	}
	// At the beginning: nil positions start at sequence 1.
	if pos, err = src.Rescale([]connector.Position{nil, nil}, 2); err != nil || string(pos[0]) != "\x01" {
		t.Errorf("rescaling positions at the beginning: %x, %v", pos, err)
	}
}

func TestRescaleRefusesACorruptPosition(t *testing.T) {
	src := &Source[int]{opts: SourceOptions[int]{Stream: "s"}}
	for _, bad := range []connector.Position{{0x80}, {0x00}, {0x05, 0x01}, {0x00, 0x01}, {0x00, 0x02, 0x01}, {0x00, 0x01, 0x00}, {0x00, 0x01, 0x03, 0x04}} {
		if _, err := src.Rescale([]connector.Position{bad, nil}, 3); err == nil {
			t.Errorf("rescaling %x: no error", []byte(bad))
		}
	}
}

func TestSubjectMatches(t *testing.T) {
	for _, c := range []struct {
		filter, subject string
		want            bool
	}{
		{"a.b", "a.b", true}, {"a.b", "a.c", false}, {"a.b", "a.b.c", false}, {"a.b.c", "a.b", false},
		{"a.*", "a.b", true}, {"a.*", "a.b.c", false}, {"*.b", "a.b", true},
		{"a.>", "a.b", true}, {"a.>", "a.b.c", true}, {"a.>", "a", false}, {">", "a.b", true},
		{"a.*.c", "a.x.c", true}, {"a.*.c", "a.x.d", false},
	} {
		if got := subjectMatches(c.filter, c.subject); got != c.want {
			t.Errorf("subjectMatches(%q, %q) = %v, want %v", c.filter, c.subject, got, c.want)
		}
	}
}
