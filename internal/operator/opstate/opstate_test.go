package opstate

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
)

// strs is a List of strings, encoded as themselves.
type strs struct{ items []string }

func (s *strs) Encode(dst [][]byte) [][]byte {
	for _, v := range s.items {
		dst = append(dst, []byte(v))
	}
	return dst
}

func (s *strs) Decode(items [][]byte) error {
	s.items = nil
	for _, b := range items {
		s.items = append(s.items, string(b))
	}
	return nil
}

func newStore(j, n int) *Store {
	return &Store{subtask: j, parallelism: n, lists: map[string]List{}, restored: map[string][][]byte{}}
}

// snapshots returns the snapshots of n subtasks whose lists "split" and
// "union" hold per elements each, named by subtask and index.
func snapshots(t *testing.T, n, per int) [][]byte {
	var out [][]byte
	for j := range n {
		s := newStore(j, n)
		split, union := &strs{}, &strs{}
		if err := s.Register("split", split, false); err != nil {
			t.Fatal(err)
		}
		if err := s.Register("union", union, true); err != nil {
			t.Fatal(err)
		}
		for i := range per {
			split.items = append(split.items, fmt.Sprintf("s%d.%d", j, i))
			union.items = append(union.items, fmt.Sprintf("u%d.%d", j, i))
		}
		out = append(out, s.encode())
	}
	return out
}

func TestListsRestoredAtAnotherParallelismAreSplitEvenlyOrWhole(t *testing.T) {
	old := snapshots(t, 2, 5)
	var all []string
	for j := range 3 {
		s := newStore(j, 3)
		for _, snap := range old { // every old subtask's, in order (task.Union)
			if err := s.restore(snap); err != nil {
				t.Fatal(err)
			}
		}
		split, union := &strs{}, &strs{}
		if err := s.Register("split", split, false); err != nil {
			t.Fatal(err)
		}
		if err := s.Register("union", union, true); err != nil {
			t.Fatal(err)
		}
		if want := []int{3, 3, 4}[j]; len(split.items) != want {
			t.Errorf("new subtask %d took %d split elements %v, want %d", j, len(split.items), split.items, want)
		}
		all = append(all, split.items...)
		if len(union.items) != 10 {
			t.Errorf("new subtask %d took %d union elements, want all 10", j, len(union.items))
		}
	}
	var want []string
	for j := range 2 {
		for i := range 5 {
			want = append(want, "s"+strconv.Itoa(j)+"."+strconv.Itoa(i))
		}
	}
	if !slices.Equal(all, want) {
		t.Fatalf("the new subtasks took %v, want every old element once, in order: %v", all, want)
	}
}

func TestListsRestoredAtTheSameParallelismStayWithTheirSubtask(t *testing.T) {
	old := snapshots(t, 2, 3)
	s := newStore(1, 2)
	if err := s.restore(old[1]); err != nil {
		t.Fatal(err)
	}
	split, union := &strs{}, &strs{}
	_ = s.Register("split", split, false)
	_ = s.Register("union", union, true)
	if want := []string{"s1.0", "s1.1", "s1.2"}; !slices.Equal(split.items, want) {
		t.Fatalf("split %v, want %v", split.items, want)
	}
	if want := []string{"u1.0", "u1.1", "u1.2"}; !slices.Equal(union.items, want) {
		t.Fatalf("union %v, want %v", union.items, want)
	}
}

func TestAListCreatedTwiceIsAnError(t *testing.T) {
	s := newStore(0, 1)
	_ = s.Register("l", &strs{}, false)
	if err := s.Register("l", &strs{}, true); err == nil {
		t.Fatal("a list registered twice was accepted")
	}
}

func TestACorruptSnapshotIsAnError(t *testing.T) {
	snap := snapshots(t, 1, 3)[0]
	if err := newStore(0, 1).restore(snap[:len(snap)-2]); err == nil {
		t.Fatal("a truncated snapshot restored")
	}
}
