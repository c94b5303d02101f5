package state

import (
	"maps"
	"testing"
)

// The keys written since a snapshot come back from the log, each at
// least once; a key written again while the filter still holds it is
// not logged again.
func TestDirtyKeysLogEachKeyAndSkipARecentRepeat(t *testing.T) {
	d := newDirtyKeys[int64](2)
	if !d.add(0, 5, 0) || d.add(0, 5, 0) {
		t.Fatal("a key written twice in a row was logged twice, or not at all")
	}
	if !d.add(1, 5, 0) {
		t.Fatal("a key of another shard was taken as logged")
	}
	d.add(1, 6, 0)
	got := map[int64]int{}
	for s := range 2 {
		d.each(s, func(k int64) { got[k]++ })
	}
	if want := map[int64]int{5: 2, 6: 1}; !maps.Equal(got, want) {
		t.Fatalf("logged %v, want %v", got, want)
	}
	d.reset()
	if n := d.count(); n != 0 {
		t.Fatalf("%d keys logged after a reset", n)
	}
	if !d.add(0, 5, 0) {
		t.Fatal("a key written after a reset was taken as logged")
	}
}

// A shard whose log outgrows its entries turns it into a set: keys
// cycling through more than the filter holds are then held once each.
func TestADirtyLogLongerThanItsShardBecomesASet(t *testing.T) {
	d := newDirtyKeys[int64](1)
	const keys = 2 * recentSlots
	for round := range 4 {
		for k := range int64(keys) {
			d.add(0, k, keys)
		}
		if round == 0 && d.sets[0] != nil {
			t.Fatal("the log became a set before it outgrew its shard")
		}
	}
	if d.sets[0] == nil {
		t.Fatalf("a log of %d keys written 4 times each is still a log of %d", keys, len(d.logs[0]))
	}
	seen := map[int64]int{}
	d.each(0, func(k int64) { seen[k]++ })
	if len(seen) != keys {
		t.Fatalf("%d distinct keys recorded, want %d", len(seen), keys)
	}
	if n := d.count(); n > 2*keys+logSlack {
		t.Fatalf("%d keys recorded for %d written: the set did not bound the log", n, keys)
	}
	d.reset()
	if d.sets[0] != nil || d.count() != 0 {
		t.Fatal("a reset kept the set")
	}
}

// Deltas that hold a key more than once (written again after the filter
// forgot it) restore the table as it was at each snapshot.
func TestDeltasWithRepeatedKeysRestoreTheTable(t *testing.T) {
	const keys = 3 * recentSlots
	files, b, tb := filledInc(t, keys)
	sharedFiles(t, b, files) // the chain's base
	for round := range int64(3) {
		for pass := range int64(2) {
			for k := range int64(keys) {
				s := b.Shard(fixtureKG(k))
				switch {
				case pass == 1 && k%7 == round:
					tb.Delete(s, k)
				case pass == 1 && k%5 == 0:
				default:
					tb.Put(s, k, round*100+pass)
				}
			}
		}
		if n := tb.dirty.count(); n <= keys {
			t.Fatalf("round %d: %d keys logged for %d written twice: no key was logged twice", round, n, keys)
		}
		data := snap(t, b)
		if round == 0 && len(tb.chain) != 2 { // later, overwriting deltas outgrow the state
			t.Fatalf("round %d: the snapshot was full (a chain of %d), not a delta", round, len(tb.chain))
		}
		if got, want := restoredContents(t, files, data), tableContents(tb); !maps.Equal(got, want) {
			t.Fatalf("round %d: restored %d entries differing from the table's %d", round, len(got), len(want))
		}
	}
}
