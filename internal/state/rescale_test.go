package state

import (
	"testing"

	"github.com/weir-stream/weir/codec"
)

// Snapshots of the backends of one parallelism, restored one by one into
// every backend of another whose key groups overlap, leave each keyed
// table entry, sharded table entry and keyed timer in exactly the backend
// that owns its key group.
func TestRestoreFromSeveralSnapshotsKeepsOnlyOwnKeyGroups(t *testing.T) {
	var snaps [][]byte
	for _, r := range fixtureRanges(2) {
		b := NewBackend(r[0], r[1], fixtureMaxPar)
		p := registerKeyedParts(t, b)
		for k := int64(0); k < 40; k++ {
			if g := fixtureKG(k); g >= r[0] && g < r[1] {
				p.keyed.Put(b.Shard(g), k, 100+k)
				p.sharded.Put(b.Shard(g), -k, 200+k) // the shard, not the key, tells the key group
				p.timers.Register(k, k)
			}
		}
		snaps = append(snaps, snap(t, b))
	}
	keyed, sharded, timers := map[int64]int{}, map[int64]int{}, map[int64]int{}
	for _, r := range fixtureRanges(3) {
		b := NewBackend(r[0], r[1], fixtureMaxPar)
		for i, o := range fixtureRanges(2) {
			if o[0] < r[1] && r[0] < o[1] {
				if err := b.Restore(snaps[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
		countOwned(t, "restored", r, registerKeyedParts(t, b), keyed, sharded, timers)
	}
	for k := int64(0); k < 40; k++ {
		if keyed[k] != 1 || sharded[k] != 1 || timers[k] != 1 {
			t.Errorf("key %d restored %d, %d and %d times, want once each", k, keyed[k], sharded[k], timers[k])
		}
	}
}

// State one subtask never registered after a restore at another
// parallelism is carried into its snapshots; after a second rescale it
// must not bring back the entries of key groups another subtask owned
// and changed (or deleted) meanwhile.
func TestCarriedStateDoesNotOverrideTheOwnersChanges(t *testing.T) {
	const maxPar = 4
	kg := func(k int64) int { return int(k % maxPar) }
	ic := codec.Int64()
	register := func(b *Backend) *Table[int64, int64] {
		tb, err := Register(b, "x", TableOptions[int64, int64]{Key: ic, Value: ic, KeyGroup: kg})
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	// Parallelism 1: keys 0 (key group 0), 1 and 2.
	one := NewBackend(0, maxPar, maxPar)
	x := register(one)
	for k := int64(0); k < 3; k++ {
		x.Put(one.Shard(kg(k)), k, 1)
	}
	s := snap(t, one)

	// Parallelism 2: subtask 0 (key groups 0, 1) changes key 0 and
	// deletes key 1; subtask 1 (2, 3) never registers "x".
	n0, n1 := NewBackend(0, 2, maxPar), NewBackend(2, maxPar, maxPar)
	for _, b := range []*Backend{n0, n1} {
		if err := b.Restore(s); err != nil {
			t.Fatal(err)
		}
	}
	x0 := register(n0)
	x0.Put(n0.Shard(0), 0, 5)
	x0.Delete(n0.Shard(1), 1)
	t0, t1 := snap(t, n0), snap(t, n1)

	// Parallelism 1 again, from both.
	back := NewBackend(0, maxPar, maxPar)
	if err := back.Restore(t0, t1); err != nil {
		t.Fatal(err)
	}
	xb := register(back)
	got := map[int64]int64{}
	for k := int64(0); k < 3; k++ {
		if v, ok := xb.Get(back.Shard(kg(k)), k); ok {
			got[k] = v
		}
	}
	want := map[int64]int64{0: 5, 2: 1}
	if len(got) != len(want) || got[0] != want[0] || got[2] != want[2] {
		t.Fatalf("after two rescales the table holds %v, want %v (key 0 changed and key 1 deleted by their owner, key 2 carried by its owner)", got, want)
	}
}
