package state

import (
	"errors"
	"maps"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/weir-stream/weir/codec"
)

// registerMaps registers the MapTable "m" of maps of int64 to string, keyed
// by int64.
func registerMaps(t testing.TB, b *Backend) *MapTable[int64, int64, string] {
	t.Helper()
	ic := codec.Int64()
	m, err := RegisterMap(b, "m", TableOptions[int64, map[int64]string]{
		Key: ic, Value: MapCodec(ic, codec.String()), KeyGroup: fixtureKG, Clone: maps.Clone[map[int64]string]})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mapContents returns every map of m, copied.
func mapContents(m *MapTable[int64, int64, string]) map[int64]map[int64]string {
	got := map[int64]map[int64]string{}
	tb := m.Table()
	for s := range tb.Shards() {
		tb.All(s, func(k int64, v map[int64]string) bool { got[k] = maps.Clone(v); return true })
	}
	return got
}

// Random entry writes (Put and Compute), removals, whole-map writes and
// deletions, with a snapshot after each round: every snapshot, restored
// at the parallelism it was taken at and at another, holds the maps as
// they were at it. The
// rounds run through bases and deltas (maxDeltas) of every kind: entries
// written one by one, keys written whole, keys whose few entries were
// written more often than they are many.
func TestAMapTablesSnapshotsRestoreTheMapsItHeldAtEachOne(t *testing.T) {
	files := newMemFiles()
	b := incBackend(files, [2]int{0, fixtureMaxPar})
	m := registerMaps(t, b)
	model := map[int64]map[int64]string{}
	rng := rand.New(rand.NewPCG(3, 4))
	type taken struct {
		data []byte
		want map[int64]map[int64]string
	}
	var snaps []taken
	for round := range 50 {
		for range 1 + rng.IntN(300) {
			k := rng.Int64N(40)
			s := b.Shard(fixtureKG(k))
			switch op := rng.IntN(20); {
			case op == 0:
				m.Delete(s, k)
				delete(model, k)
			case op == 1:
				whole := map[int64]string{int64(round): "whole"}
				m.Table().Put(s, k, whole)
				model[k] = maps.Clone(whole)
			case op < 6:
				uk := rng.Int64N(30)
				m.Remove(s, k, uk)
				if delete(model[k], uk); len(model[k]) == 0 {
					delete(model, k)
				}
			case op < 9: // one entry, written more often than the map has entries
				v := string(rune('a' + round%26))
				for range 80 {
					m.Put(s, k, 0, v)
				}
				if model[k] == nil {
					model[k] = map[int64]string{}
				}
				model[k][0] = v
			case op < 12: // an entry changed from its value now
				uk, v := rng.Int64N(30), string(rune('a'+rng.IntN(26)))
				m.Compute(s, k, uk, func(old string, ok bool) string {
					if ok {
						return old[len(old)-min(len(old), 3):] + v
					}
					return v
				})
				if model[k] == nil {
					model[k] = map[int64]string{}
				}
				old := model[k][uk]
				model[k][uk] = old[len(old)-min(len(old), 3):] + v
			default:
				uk, v := rng.Int64N(30), string(rune('a'+rng.IntN(26)))
				m.Put(s, k, uk, v)
				if model[k] == nil {
					model[k] = map[int64]string{}
				}
				model[k][uk] = v
			}
		}
		want := map[int64]map[int64]string{}
		for k, v := range model {
			want[k] = maps.Clone(v)
		}
		if got := mapContents(m); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: the table holds %v, want %v", round, got, want)
		}
		snaps = append(snaps, taken{snap(t, b), want})
	}
	for i, s := range snaps {
		for _, r := range fixtureRanges(3) {
			nb := incBackend(files, r)
			if err := nb.Restore(s.data); err != nil {
				t.Fatalf("snapshot %d: %v", i, err)
			}
			got := mapContents(registerMaps(t, nb))
			for k, v := range s.want {
				if g := fixtureKG(k); g >= r[0] && g < r[1] && !maps.Equal(got[k], v) {
					t.Errorf("snapshot %d, key groups %v: key %d = %v, want %v", i, r, k, got[k], v)
				}
			}
			for k := range got {
				if _, ok := s.want[k]; !ok {
					t.Errorf("snapshot %d, key groups %v: key %d restored, but was deleted", i, r, k)
				}
			}
		}
	}
}

// A key's large map, one entry added and one removed: the delta holds
// those two, not the map, and the map is not copied on its next write
// (the delta shares no map with its encoding).
func TestAMapTablesDeltaHoldsTheEntriesWrittenNotTheWholeMap(t *testing.T) {
	files := newMemFiles()
	b := incBackend(files, [2]int{0, fixtureMaxPar})
	m := registerMaps(t, b)
	s := b.Shard(fixtureKG(1))
	for uk := range int64(2000) {
		m.Put(s, 1, uk, "a value of some length")
	}
	snap(t, b)
	base := files.bytes
	m.Put(s, 1, 5000, "added")
	m.Remove(s, 1, 7)
	before, _ := m.Table().Get(s, 1)
	data := snap(t, b)
	if files.puts != 2 {
		t.Fatalf("%d files uploaded after two snapshots, want 2 (a base and a delta)", files.puts)
	}
	if delta := files.bytes - base; delta*100 > base {
		t.Errorf("the delta of two entries is %d bytes, the base of 2000 %d", delta, base)
	}
	m.Put(s, 1, 5001, "after")
	if after, _ := m.Table().Get(s, 1); reflect.ValueOf(after).Pointer() != reflect.ValueOf(before).Pointer() {
		t.Error("the map was copied on its first write after a delta of its entries")
	}
	nb := incBackend(files, [2]int{0, fixtureMaxPar})
	if err := nb.Restore(data); err != nil {
		t.Fatal(err)
	}
	got, _ := registerMaps(t, nb).Table().Get(s, 1)
	if len(got) != 2000 || got[5000] != "added" || got[7] != "" || got[5001] != "" {
		t.Errorf("restored %d entries, 5000=%q, 7=%q, 5001=%q; want 2000, %q and none", len(got), got[5000], got[7], got[5001], "added")
	}
}

// A delta of a map's entries names a table of maps: restored into a
// table of whole values, it is corrupt, not applied as a whole value.
func TestADeltaOfMapEntriesIsCorruptForATableOfWholeValues(t *testing.T) {
	files := newMemFiles()
	b := incBackend(files, [2]int{0, fixtureMaxPar})
	m := registerMaps(t, b)
	s := b.Shard(fixtureKG(1))
	m.Put(s, 1, 1, "x")
	snap(t, b)
	m.Put(s, 1, 2, "y")
	data := snap(t, b)
	nb := incBackend(files, [2]int{0, fixtureMaxPar})
	if err := nb.Restore(data); err != nil {
		t.Fatal(err)
	}
	ic := codec.Int64()
	_, err := Register(nb, "m", TableOptions[int64, map[int64]string]{Key: ic, Value: MapCodec(ic, codec.String()), KeyGroup: fixtureKG})
	if !errors.Is(err, codec.ErrCorrupt) {
		t.Fatalf("restoring a delta of map entries into a table of whole values: %v, want an error wrapping codec.ErrCorrupt", err)
	}
}

func TestTheSameMapTableIsReturnedToASecondRegistration(t *testing.T) {
	b := incBackend(newMemFiles(), [2]int{0, fixtureMaxPar})
	if a, c := registerMaps(t, b), registerMaps(t, b); a != c {
		t.Error("a second registration of a MapTable returned another")
	}
	ic := codec.Int64()
	if _, err := Register(b, "w", TableOptions[int64, map[int64]string]{Key: ic, Value: MapCodec(ic, codec.String()), KeyGroup: fixtureKG}); err != nil {
		t.Fatal(err)
	}
	if _, err := RegisterMap(b, "w", TableOptions[int64, map[int64]string]{Key: ic, Value: MapCodec(ic, codec.String()), KeyGroup: fixtureKG}); err == nil {
		t.Error("a table of whole maps was registered again as a MapTable")
	}
}
