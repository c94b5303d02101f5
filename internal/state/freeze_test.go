package state

import (
	"testing"

	"github.com/weir-stream/weir/codec"
)

// mapTable registers a table of maps whose Clone counts its copies.
func mapTable(t *testing.T, b *Backend, copies *int) *Table[string, map[string]int64] {
	t.Helper()
	tb, err := Register(b, "maps", TableOptions[string, map[string]int64]{Key: codec.String(),
		Value: codec.MustFor[map[string]int64](), KeyGroup: func(k string) int { return int(k[0]) % 4 },
		Clone: func(m map[string]int64) map[string]int64 {
			*copies++
			c := make(map[string]int64, len(m))
			for k, v := range m {
				c[k] = v
			}
			return c
		}})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// restoredMap returns key k's map in the state data restores.
func restoredMap(t *testing.T, data []byte, k string) map[string]int64 {
	t.Helper()
	b := NewBackend(0, 4, 4)
	if err := b.Restore(data); err != nil {
		t.Fatal(err)
	}
	var copies int
	m, _ := mapTable(t, b, &copies).Get(b.Shard(int(k[0])%4), k)
	return m
}

// A small table is encoded in the snapshot's synchronous part once its
// entries' size is known: its values are then changed in place, not
// copied, and the snapshot still holds them as they were at the barrier.
func TestASmallTableIsEncodedAtTheBarrierAndNotCopiedAfter(t *testing.T) {
	b := NewBackend(0, 4, 4)
	var copies int
	tb := mapTable(t, b, &copies)
	s := b.Shard(int('a') % 4)
	tb.PutNew(s, "a", map[string]int64{"x": 1})

	// The first snapshot does not know the entries' size yet: it freezes
	// the values, so the first change after it copies.
	first := later(t, b)
	m, _ := tb.GetMutable(s, "a")
	m["x"] = 2
	if copies != 1 {
		t.Fatalf("%d copies after the first snapshot, want 1", copies)
	}
	if got := restoredMap(t, first(), "a"); got["x"] != 1 {
		t.Fatalf("first snapshot holds %v, want x=1", got)
	}

	// The second is encoded at once: nothing is copied after it.
	second := later(t, b)
	m, _ = tb.GetMutable(s, "a")
	m["x"] = 3
	if copies != 1 {
		t.Fatalf("%d copies after the second snapshot, want still 1", copies)
	}
	if got := restoredMap(t, second(), "a"); got["x"] != 2 {
		t.Fatalf("second snapshot holds %v, want x=2", got)
	}
}

// While a frozen encoding of a table is still to run, a snapshot that
// encodes the table at once does not stop the copying: the pending one
// shares the values not copied since.
func TestATablesValuesAreCopiedWhileAFrozenEncodingIsPending(t *testing.T) {
	b := NewBackend(0, 4, 4)
	var copies int
	tb := mapTable(t, b, &copies)
	sa, sb := b.Shard(int('a')%4), b.Shard(int('b')%4)
	tb.PutNew(sa, "a", map[string]int64{"x": 1})
	tb.PutNew(sb, "b", map[string]int64{"x": 1})
	snap(t, b) // learns the entries' size

	// Over the budget for encoding at once: frozen, encoded later.
	b.syncBudget = 0
	frozen := tb.freeze()

	// Encoded at once while the frozen one is pending: b, which the
	// frozen one shares, is copied on its first change.
	encoded := later(t, b)
	m, _ := tb.GetMutable(sb, "b")
	m["x"] = 2
	if copies != 1 {
		t.Fatalf("%d copies while a frozen encoding was pending, want 1", copies)
	}
	ref := NewBackend(0, 4, 4)
	var refCopies int
	rt := mapTable(t, ref, &refCopies)
	rt.PutNew(sa, "a", map[string]int64{"x": 1})
	rt.PutNew(sb, "b", map[string]int64{"x": 1})
	if got, want := string(frozen(nil)), string(ref.parts["maps"].freeze()(nil)); got != want {
		t.Fatalf("the frozen encoding is %q, want %q (both x=1, as at its snapshot)", got, want)
	}
	if got := restoredMap(t, encoded(), "b"); got["x"] != 1 {
		t.Fatalf("the snapshot encoded at once holds %v, want x=1", got)
	}
	if got := restoredMap(t, snap(t, b), "b"); got["x"] != 2 {
		t.Fatalf("the next snapshot holds %v, want x=2", got)
	}

	// The frozen one ran and the last snapshot released the values: a
	// change no longer copies.
	m, _ = tb.GetMutable(sa, "a")
	m["x"] = 3
	if copies != 1 {
		t.Fatalf("%d copies after the pending encoding ran, want still 1", copies)
	}
}
