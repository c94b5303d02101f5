package state

import (
	"math/rand/v2"
	"testing"

	"github.com/weir-stream/weir/codec"
)

func TestTimersFireInTimeOrderOnceEach(t *testing.T) {
	ts := NewTimers[string]()
	ts.Register(30, "c")
	ts.Register(10, "a")
	ts.Register(20, "b")
	ts.Register(10, "a") // duplicate
	ts.Register(25, "gone")
	ts.Delete(25, "gone")
	if n, _ := ts.Next(); n != 10 {
		t.Fatalf("Next = %d, want 10", n)
	}
	var got []string
	for {
		_, k, ok := ts.PopDue(25)
		if !ok {
			break
		}
		got = append(got, k)
	}
	if len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("due at 25: got %v, want [a b]", got)
	}
	if ts.Len() != 1 {
		t.Fatalf("Len = %d, want 1", ts.Len())
	}
	if _, k, ok := ts.PopDue(100); !ok || k != "c" {
		t.Fatalf("got %q %v, want c", k, ok)
	}
	if _, ok := ts.Next(); ok {
		t.Fatal("timers left")
	}
}

func TestDeleteThenRegisterAgainFiresOnce(t *testing.T) {
	ts := NewTimers[int]()
	ts.Register(5, 1)
	ts.Delete(5, 1)
	ts.Register(5, 1)
	n := 0
	for {
		if _, _, ok := ts.PopDue(5); !ok {
			break
		}
		n++
	}
	if n != 1 {
		t.Fatalf("fired %d times, want 1", n)
	}
}

func stringTable(t *testing.T, b *Backend, name string) *Table[string, int64] {
	t.Helper()
	tb, err := Register(b, name, TableOptions[string, int64]{Key: codec.String(), Value: codec.Int64(),
		KeyGroup: func(k string) int { return int(k[0]) % 4 }})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestRegisterRejectsTypeClashAndMissingCodecs(t *testing.T) {
	b := NewBackend(0, 4, 4)
	stringTable(t, b, "x")
	if _, err := Register(b, "x", TableOptions[string, int64]{Key: codec.String(), Value: codec.Int64()}); err != nil {
		t.Fatalf("re-registering with the same types: %v", err)
	}
	if _, err := Register(b, "x", TableOptions[string, string]{Key: codec.String(), Value: codec.String()}); err == nil {
		t.Fatal("registering x with other types succeeded")
	}
	if _, err := Register(b, "y", TableOptions[string, string]{}); err == nil {
		t.Fatal("registering without codecs succeeded")
	}
}

// A snapshot sees the state as it was when it was taken, whatever changes
// afterwards, and restores into a backend owning some of the key groups.
func TestSnapshotIsCopyOnWrite(t *testing.T) {
	b := NewBackend(0, 4, 4)
	tb := stringTable(t, b, "counts")
	kg := func(k string) int { return b.Shard(int(k[0]) % 4) }
	for i, k := range []string{"a", "b", "c", "d", "e"} {
		tb.Put(kg(k), k, int64(i))
	}
	lists, err := Register(b, "lists", TableOptions[string, map[string]int64]{Key: codec.String(),
		Value: codec.MustFor[map[string]int64](), KeyGroup: func(k string) int { return int(k[0]) % 4 },
		Clone: func(m map[string]int64) map[string]int64 {
			c := map[string]int64{}
			for k, v := range m {
				c[k] = v
			}
			return c
		}})
	if err != nil {
		t.Fatal(err)
	}
	lists.PutNew(kg("a"), "a", map[string]int64{"x": 1})
	encode := later(t, b)
	// Change everything after the snapshot, before encoding.
	tb.Put(kg("a"), "a", 100)
	tb.Delete(kg("b"), "b")
	tb.Put(kg("z"), "z", 7)
	m, _ := lists.GetMutable(kg("a"), "a")
	m["x"] = 99
	m["y"] = 5
	data := encode()

	restored := NewBackend(0, 4, 4)
	if err := restored.Restore(data); err != nil {
		t.Fatal(err)
	}
	rt := stringTable(t, restored, "counts")
	want := map[string]int64{"a": 0, "b": 1, "c": 2, "d": 3, "e": 4}
	if rt.Len() != len(want) {
		t.Fatalf("restored %d keys, want %d", rt.Len(), len(want))
	}
	for k, v := range want {
		if got, ok := rt.Get(restored.Shard(int(k[0])%4), k); !ok || got != v {
			t.Errorf("restored %s = %d, %v; want %d", k, got, ok, v)
		}
	}
	// The live table kept its changes.
	if got, _ := tb.Get(kg("a"), "a"); got != 100 {
		t.Errorf("live a = %d, want 100", got)
	}
	rl, err := Register(restored, "lists", TableOptions[string, map[string]int64]{Key: codec.String(),
		Value: codec.MustFor[map[string]int64](), KeyGroup: func(k string) int { return int(k[0]) % 4 }})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := rl.Get(restored.Shard(int('a')%4), "a"); len(got) != 1 || got["x"] != 1 {
		t.Errorf("restored list a = %v, want map[x:1]", got)
	}

	// A backend owning key groups [2,4) keeps only their keys.
	half := NewBackend(2, 4, 4)
	if err := half.Restore(data); err != nil {
		t.Fatal(err)
	}
	ht := stringTable(t, half, "counts")
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		_, ok := ht.Get(0, k)
		_, ok2 := ht.Get(1, k)
		if owned := int(k[0])%4 >= 2; owned != (ok || ok2) {
			t.Errorf("key %s (group %d): present %v", k, int(k[0])%4, ok || ok2)
		}
	}
}

func TestRestoreRejectsCorruptData(t *testing.T) {
	b := NewBackend(0, 4, 4)
	tb := stringTable(t, b, "counts")
	tb.Put(b.Shard(int('a')%4), "a", 1)
	data := snap(t, b)
	for _, cut := range []int{1, len(data) / 2, len(data) - 1} {
		r := NewBackend(0, 4, 4)
		err := r.Restore(data[:cut])
		if err == nil {
			_, err = Register(r, "counts", TableOptions[string, int64]{Key: codec.String(), Value: codec.Int64(),
				KeyGroup: func(k string) int { return int(k[0]) % 4 }})
		}
		if err == nil {
			t.Errorf("restoring %d of %d bytes succeeded", cut, len(data))
		}
	}
}

// A table sharded by key group without a key-group function keeps each
// entry in the shard its caller names, and a restore into backends owning
// part of the key groups gives each the entries of its own.
func TestShardedTableRestoresEachBackendItsKeyGroups(t *testing.T) {
	opts := TableOptions[string, int64]{Key: codec.String(), Value: codec.Int64(), Sharded: true}
	src := NewBackend(0, 4, 4)
	tb, err := Register(src, "t", opts)
	if err != nil {
		t.Fatal(err)
	}
	for kg := range 4 {
		tb.Put(src.Shard(kg), "w", int64(kg))
	}
	data := snap(t, src)
	for _, r := range []struct{ start, end int }{{0, 2}, {2, 4}} {
		dst := NewBackend(r.start, r.end, 4)
		if err := dst.Restore(data); err != nil {
			t.Fatal(err)
		}
		rt, err := Register(dst, "t", opts)
		if err != nil {
			t.Fatal(err)
		}
		if rt.Shards() != r.end-r.start || rt.Len() != r.end-r.start {
			t.Fatalf("key groups [%d, %d): %d shards, %d entries", r.start, r.end, rt.Shards(), rt.Len())
		}
		for kg := r.start; kg < r.end; kg++ {
			if v, ok := rt.Get(dst.Shard(kg), "w"); !ok || v != int64(kg) {
				t.Fatalf("key group %d: got %d, %v; want %d", kg, v, ok, kg)
			}
		}
	}
}

// A table whose values users change in place is encoded by Snapshot
// itself: a change made afterwards without any call to the table, as a
// user's function holding the value makes it, is not in the snapshot.
func TestSnapshotOfValuesChangedInPlaceIsTheStateAtTheSnapshot(t *testing.T) {
	type acc struct{ URLs map[string]bool }
	opts := TableOptions[string, acc]{Key: codec.String(), Value: codec.MustFor[acc](), InPlace: Mutable[acc]()}
	b := NewBackend(0, 1, 1)
	tb, err := Register(b, "accs", opts)
	if err != nil {
		t.Fatal(err)
	}
	a := acc{URLs: map[string]bool{"/a": true}}
	tb.Put(0, "k", a)
	encode := later(t, b)
	a.URLs["/b"] = true // the value the table holds, changed in place
	restored := NewBackend(0, 1, 1)
	if err := restored.Restore(encode()); err != nil {
		t.Fatal(err)
	}
	rt, err := Register(restored, "accs", opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := rt.Get(0, "k"); len(got.URLs) != 1 || !got.URLs["/a"] {
		t.Fatalf("restored %v, want map[/a:true]", got.URLs)
	}
}

func TestMutableTellsValuesThatCanChangeInPlace(t *testing.T) {
	type flat struct {
		N    int64
		S    string
		Arr  [4]float64
		Zero [0]*int
	}
	type holder struct {
		N int64
		M map[string]bool
	}
	type nested struct{ H [1]holder }
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"int64", Mutable[int64](), false},
		{"string", Mutable[string](), false},
		{"struct of numbers, strings and arrays", Mutable[flat](), false},
		{"map", Mutable[map[string]int](), true},
		{"slice", Mutable[[]int64](), true},
		{"pointer", Mutable[*int64](), true},
		{"interface", Mutable[any](), true},
		{"struct holding a map", Mutable[holder](), true},
		{"array of structs holding a map", Mutable[nested](), true},
	} {
		if c.got != c.want {
			t.Errorf("Mutable[%s] = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// later takes a snapshot of b and returns the function that encodes it.
func later(t testing.TB, b *Backend) func() []byte {
	t.Helper()
	enc, err := b.Snapshot(SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return func() []byte {
		e, err := enc(nil)
		if err != nil {
			t.Fatal(err)
		}
		return e.Data
	}
}

// snap returns b's snapshot, encoded at once.
func snap(t testing.TB, b *Backend) []byte {
	t.Helper()
	return later(t, b)()
}

// Random registrations, deletions and firings against a plain map: every
// live timer fires once, in time order, and deleted ones never. With few
// keys over many times the timers of a time are few; with many keys over
// few times, they are many (and indexed).
func TestTimersMatchAReferenceUnderRandomOperations(t *testing.T) {
	for _, c := range []struct {
		name         string
		span, keys   int64
		reg, del     int // weights of a registration and a deletion against one advance of the time
		seed1, seed2 uint64
	}{{"few keys per time", 50, 20, 2, 1, 1, 2}, {"many keys per time", 3, 200, 40, 20, 3, 4}} {
		t.Run(c.name, func(t *testing.T) {
			checkTimersAgainstAReference(t, c.span, c.keys, c.reg, c.del, rand.New(rand.NewPCG(c.seed1, c.seed2)))
		})
	}
}

// checkTimersAgainstAReference registers timers at up to span after the
// current time for up to keys keys, deletes them (half of the time one
// registered before) and fires them at random, reg registrations and del
// deletions to one advance of the time, and checks them against a plain
// map.
func checkTimersAgainstAReference(t *testing.T, span, keys int64, reg, del int, rng *rand.Rand) {
	var registered [][2]int64
	ts := NewTimers[int]()
	live := map[[2]int64]bool{}
	now := int64(0)
	indexed := false
	defer func() {
		if keys >= 2*indexFrom && !indexed && !t.Failed() {
			t.Error("no time held enough timers to be indexed: the test did not reach that path")
		}
	}()
	for step := range 20000 {
		for _, b := range ts.buckets {
			indexed = indexed || b.at != nil
		}
		tm, key := now+rng.Int64N(span), int(rng.Int64N(keys))
		switch op := rng.IntN(reg + del + 1); {
		case op < reg:
			ts.Register(tm, key)
			live[[2]int64{tm, int64(key)}] = true
			registered = append(registered, [2]int64{tm, int64(key)})
		case op < reg+del:
			if len(registered) > 0 && rng.IntN(2) == 0 {
				r := registered[rng.IntN(len(registered))]
				tm, key = r[0], int(r[1])
			}
			ts.Delete(tm, key)
			delete(live, [2]int64{tm, int64(key)})
		default:
			now += rng.Int64N(10)
			last := int64(-1)
			for {
				at, k, ok := ts.PopDue(now)
				if !ok {
					break
				}
				if at < last || at > now || !live[[2]int64{at, int64(k)}] {
					t.Fatalf("step %d: fired (%d, %d) after %d at %d; live: %v", step, at, k, last, now, live[[2]int64{at, int64(k)}])
				}
				last = at
				delete(live, [2]int64{at, int64(k)})
			}
			for tk := range live {
				if tk[0] <= now {
					t.Fatalf("step %d: timer %v due at %d did not fire", step, tk, now)
				}
			}
		}
		if ts.Len() != len(live) {
			t.Fatalf("step %d: Len %d, want %d", step, ts.Len(), len(live))
		}
	}
}
