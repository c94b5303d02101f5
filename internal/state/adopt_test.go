package state

import (
	"testing"

	"github.com/weir-stream/weir/codec"
)

// oldBackends returns two backends holding keys 0..39 by key group, each
// with its snapshot taken (frozen) but not yet encoded.
func oldBackends(t *testing.T) ([]*Backend, []func() []byte) {
	var olds []*Backend
	var encs []func() []byte
	for i, r := range fixtureRanges(2) {
		b := NewBackend(r[0], r[1], fixtureMaxPar)
		p := registerKeyedParts(t, b)
		for k := int64(0); k < 40; k++ {
			if g := fixtureKG(k); g >= r[0] && g < r[1] {
				p.keyed.Put(b.Shard(g), k, 100+k)
				p.sharded.Put(b.Shard(g), -k, 200+k)
				p.timers.Register(k, k)
			}
		}
		p.single.Put(0, int64(1000+i), 1)
		olds = append(olds, b)
		encs = append(encs, later(t, b))
	}
	return olds, encs
}

// New backends at parallelism 3 adopt the backends of parallelism 2
// whose key groups overlap theirs: each keyed entry, sharded entry and
// timer lands in exactly the backend owning its key group, every new
// backend gets the unsharded entries, and writes after the adoption do
// not reach the old backends' snapshots, still being encoded.
func TestAdoptTakesOnlyTheOwnKeyGroupsAndCopiesOnWrite(t *testing.T) {
	olds, encs := oldBackends(t)
	keyed, sharded, timers := map[int64]int{}, map[int64]int{}, map[int64]int{}
	for _, r := range fixtureRanges(3) {
		b := NewBackend(r[0], r[1], fixtureMaxPar)
		if err := b.Adopt(olds...); err != nil {
			t.Fatal(err)
		}
		p := registerKeyedParts(t, b)
		overlapping := 0
		for _, o := range fixtureRanges(2) {
			if o[0] < r[1] && r[0] < o[1] {
				overlapping++
			}
		}
		if p.single.Len() != overlapping {
			t.Errorf("backend %v adopted %d unsharded entries, want the %d of the old backends it overlaps", r, p.single.Len(), overlapping)
		}
		countOwned(t, "adopted", r, p, keyed, sharded, timers)
		for g := r[0]; g < r[1]; g++ {
			p.keyed.Put(b.Shard(g), int64(g), -1)
			p.sharded.Delete(b.Shard(g), -int64(g))
		}
		p.single.Put(0, 1000, -1)
	}
	for k := int64(0); k < 40; k++ {
		if keyed[k] != 1 || sharded[k] != 1 || timers[k] != 1 {
			t.Errorf("key %d adopted %d, %d and %d times, want once each", k, keyed[k], sharded[k], timers[k])
		}
	}
	for i, enc := range encs {
		r := fixtureRanges(2)[i]
		b := NewBackend(r[0], r[1], fixtureMaxPar)
		if err := b.Restore(enc()); err != nil {
			t.Fatal(err)
		}
		p := registerKeyedParts(t, b)
		n := 0
		for s := range p.keyed.Shards() {
			p.keyed.All(s, func(k, v int64) bool {
				if v != 100+k {
					t.Errorf("the snapshot of old backend %d holds keyed %d=%d after its state was adopted and written to", i, k, v)
				}
				n++
				return true
			})
			p.sharded.All(s, func(k, v int64) bool {
				n++
				return true
			})
		}
		if v, _ := p.single.Get(0, int64(1000+i)); n != 2*20 || p.single.Len() != 1 || v != 1 {
			t.Errorf("the snapshot of old backend %d holds %d entries and unsharded %d=%d after its state was adopted and written to", i, n, 1000+i, v)
		}
	}
}

// State of the old backends that a new one never registers is carried
// into its snapshots, limited to its key groups: a backend restored from
// that snapshot holds exactly those entries.
func TestAdoptedStateNotRegisteredIsCarried(t *testing.T) {
	olds, _ := oldBackends(t)
	r := fixtureRanges(3)[1]
	b := NewBackend(r[0], r[1], fixtureMaxPar)
	if err := b.Adopt(olds...); err != nil {
		t.Fatal(err)
	}
	ic := codec.Int64()
	if _, err := Register(b, "sharded", TableOptions[int64, int64]{Key: ic, Value: ic, Sharded: true}); err != nil {
		t.Fatal(err)
	}
	data := snap(t, b)
	back := NewBackend(r[0], r[1], fixtureMaxPar)
	if err := back.Restore(data); err != nil {
		t.Fatal(err)
	}
	p := registerKeyedParts(t, back)
	n := 0
	for s := range p.keyed.Shards() {
		p.keyed.All(s, func(k, v int64) bool {
			if g := fixtureKG(k); g < r[0] || g >= r[1] || v != 100+k {
				t.Errorf("restored keyed %d=%d", k, v)
			}
			n++
			return true
		})
	}
	want := 0
	for k := int64(0); k < 40; k++ {
		if g := fixtureKG(k); g >= r[0] && g < r[1] {
			want++
		}
	}
	if n != want || p.timers.Len() != want || p.single.Len() != 2 {
		t.Fatalf("restored %d keyed entries, %d timers and %d unsharded entries, want %d, %d and 2 (both old backends overlap it)", n, p.timers.Len(), p.single.Len(), want, want)
	}
}

// A backend that registered state already cannot adopt.
func TestAdoptAfterRegistrationIsRefused(t *testing.T) {
	olds, _ := oldBackends(t)
	b := NewBackend(0, fixtureMaxPar, fixtureMaxPar)
	registerKeyedParts(t, b)
	if err := b.Adopt(olds...); err == nil {
		t.Fatal("a backend with registered state adopted more")
	}
}

// State that an instance adopted and never registered passes on when it
// is adopted in turn (two live rescales in a row).
func TestAdoptedStateNotRegisteredPassesOnAtTheNextAdoption(t *testing.T) {
	olds, _ := oldBackends(t)
	mids := []*Backend{NewBackend(0, fixtureMaxPar/2, fixtureMaxPar), NewBackend(fixtureMaxPar/2, fixtureMaxPar, fixtureMaxPar)}
	for _, m := range mids {
		if err := m.Adopt(olds...); err != nil {
			t.Fatal(err)
		}
		later(t, m) // a snapshot, not encoded: what a retiring subtask leaves
	}
	last := NewBackend(0, fixtureMaxPar, fixtureMaxPar)
	if err := last.Adopt(mids...); err != nil {
		t.Fatal(err)
	}
	p := registerKeyedParts(t, last)
	if p.keyed.Len() != 40 || p.sharded.Len() != 40 || p.timers.Len() != 40 || p.single.Len() != 2 {
		t.Fatalf("after two adoptions: %d keyed, %d sharded entries, %d timers and %d unsharded entries, want 40, 40, 40 and 2",
			p.keyed.Len(), p.sharded.Len(), p.timers.Len(), p.single.Len())
	}
}
