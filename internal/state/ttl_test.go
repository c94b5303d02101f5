package state

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/state/lsm"
)

// clock is a processing-time clock the tests set.
type clock struct{ now int64 }

func (c *clock) Now() int64 { return c.now }

// shardOf is the key-group function of the tests' tables: four key
// groups, by the key's first byte.
func shardOf(k string) int { return int(k[0]) % 4 }

// ttlTableOf registers the table of state name with a time-to-live on b,
// with entries E, and the Clone its kind of entries needs.
func ttlTableOf[E any](t *testing.T, b *Backend, name string) *Table[string, E] {
	t.Helper()
	if err := b.CheckTTL(name, true); err != nil {
		t.Fatal(err)
	}
	tb, err := Register(b, TTLName(name), TableOptions[string, E]{Key: codec.String(), Value: codec.MustFor[E](), KeyGroup: shardOf, Clone: cloneOf[E]()})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func cloneOf[E any]() func(E) E {
	var clone any
	switch any(*new(E)).(type) {
	case StampedList[int64]:
		clone = CloneStampedList[int64]
	case map[string]Stamped[int64]:
		clone = maps.Clone[map[string]Stamped[int64]]
	default:
		return nil
	}
	return clone.(func(E) E)
}

func values(t *testing.T, b *Backend, c *clock, millis int64, onRead bool) *TTLValues[string, int64] {
	return NewTTLValues(ttlTableOf[Stamped[int64]](t, b, "v"), TTL{Millis: millis, OnRead: onRead, Now: c.Now})
}

// backendKind makes the backends a test runs on: TTL works through
// Table's methods, whatever storage is behind them.
type backendKind struct {
	lsm   bool
	env   *lsm.Env
	files *memFiles
}

// eachBackend runs f on a memory backend and on an LSM backend.
func eachBackend(t *testing.T, f func(t *testing.T, k backendKind)) {
	t.Run("memory", func(t *testing.T) { f(t, backendKind{}) })
	t.Run("lsm", func(t *testing.T) { f(t, backendKind{lsm: true, env: lsmEnv(t, 1<<20), files: &memFiles{}}) })
}

// make returns an empty backend of four key groups.
func (k backendKind) make(t *testing.T) *Backend {
	t.Helper()
	if k.lsm {
		return newLSM(t, k.env, k.files, 0, 4, 4)
	}
	return NewBackend(0, 4, 4)
}

// restore returns a backend restored from snapshot e.
func (k backendKind) restore(t *testing.T, e Encoded) *Backend {
	t.Helper()
	b := k.make(t)
	if err := b.Restore(e.Data); err != nil {
		t.Fatal(err)
	}
	if err := b.Open(); err != nil {
		t.Fatal(err)
	}
	return b
}

// restart snapshots b and restores the snapshot into a new backend.
func (k backendKind) restart(t *testing.T, b *Backend) *Backend {
	t.Helper()
	return k.restore(t, encodeAll(t, b, SnapshotOptions{}))
}

func TestAnExpiredValueIsNeverReturned(t *testing.T) {
	eachBackend(t, func(t *testing.T, k backendKind) {
		c := &clock{}
		v := values(t, k.make(t), c, 1000, false)
		v.Put(shardOf("a"), "a", 7)
		c.now = 999
		if got, ok := v.Get(shardOf("a"), "a"); !ok || got != 7 {
			t.Fatalf("at 999 got %d %v, want 7", got, ok)
		}
		c.now = 1000
		if got, ok := v.Get(shardOf("a"), "a"); ok {
			t.Fatalf("at 1000 got %d, want it expired", got)
		}
		if n := v.Table().Len(); n != 0 {
			t.Fatalf("the expired value read is still stored: %d entries", n)
		}
	})
}

func TestReadsRestartTheTimeToLiveOnlyOnReadAndWrite(t *testing.T) {
	eachBackend(t, func(t *testing.T, k backendKind) {
		for _, onRead := range []bool{false, true} {
			c := &clock{}
			v := values(t, k.make(t), c, 1000, onRead)
			v.Put(shardOf("a"), "a", 7)
			c.now = 600
			v.Get(shardOf("a"), "a")
			c.now = 1500
			if _, ok := v.Get(shardOf("a"), "a"); ok != onRead {
				t.Fatalf("onRead %v: read at 1500 after a read at 600 found it: %v", onRead, ok)
			}
			c.now = 2500
			if _, ok := v.Get(shardOf("a"), "a"); ok {
				t.Fatalf("onRead %v: read at 2500, a second after the last read, found it", onRead)
			}
		}
	})
}

func TestTheSweepRemovesEntriesNeverReadAgain(t *testing.T) {
	eachBackend(t, func(t *testing.T, k backendKind) {
		c := &clock{}
		tb := ttlTableOf[Stamped[int64]](t, k.make(t), "v")
		v := NewTTLValues(tb, TTL{Millis: 1000, Now: c.Now, SweepEvery: 1})
		keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"} // in all four key groups
		for i, k := range keys {
			v.Put(shardOf(k), k, int64(i))
		}
		c.now = 1000
		accesses := 0
		for tb.Len() > 1 {
			if accesses++; accesses > 100 {
				t.Fatalf("after 100 writes of another key %d entries are left, want 1", tb.Len())
			}
			v.Put(shardOf("z"), "z", 0)
		}
		if _, ok := tb.Get(shardOf("z"), "z"); !ok {
			t.Fatal("the sweep removed the live entry")
		}
	})
}

func TestTheStampsSurviveARestore(t *testing.T) {
	eachBackend(t, func(t *testing.T, k backendKind) {
		c := &clock{}
		b := k.make(t)
		v := values(t, b, c, 1000, false)
		v.Put(shardOf("a"), "a", 1)
		c.now = 500
		v.Put(shardOf("b"), "b", 2)

		c.now = 1200
		b = k.restart(t, b)
		v = values(t, b, c, 1000, false)
		if _, ok := v.Get(shardOf("a"), "a"); ok {
			t.Fatal("a, written at 0, is alive at 1200 after the restore")
		}
		if got, ok := v.Get(shardOf("b"), "b"); !ok || got != 2 {
			t.Fatalf("b, written at 500, got %d %v at 1200 after the restore, want 2", got, ok)
		}
		c.now = 1500
		if _, ok := v.Get(shardOf("b"), "b"); ok {
			t.Fatal("b, written at 500, is alive at 1500 after the restore")
		}
	})
}

func TestARestoreWithAnotherTimeToLiveAppliesItToEveryEntry(t *testing.T) {
	eachBackend(t, func(t *testing.T, k backendKind) {
		c := &clock{}
		b := k.make(t)
		values(t, b, c, 1000, false).Put(shardOf("a"), "a", 1)
		c.now = 1500
		v := values(t, k.restart(t, b), c, 2000, false)
		if _, ok := v.Get(shardOf("a"), "a"); !ok {
			t.Fatal("a, written at 0, expired at 1500 under a time-to-live of 2000")
		}
	})
}

func TestARestoreCannotAddOrRemoveATimeToLive(t *testing.T) {
	eachBackend(t, func(t *testing.T, k backendKind) {
		b := k.make(t)
		stringTable(t, b, "plain")
		ttlTableOf[Stamped[int64]](t, b, "expiring")
		if err := b.CheckTTL("plain", true); err == nil {
			t.Error("a state registered without a time-to-live registered with one too")
		}
		if err := b.CheckTTL("expiring", false); err == nil {
			t.Error("a state registered with a time-to-live registered without one too")
		}
		b = k.restart(t, b)
		for _, tc := range []struct {
			name string
			ttl  bool
		}{{"plain", true}, {"expiring", false}} {
			err := b.CheckTTL(tc.name, tc.ttl)
			if !errors.Is(err, codec.ErrIncompatible) {
				t.Errorf("restoring %q with time-to-live %v: got %v, want an error wrapping codec.ErrIncompatible", tc.name, tc.ttl, err)
			}
			if err := b.CheckTTL(tc.name, !tc.ttl); err != nil {
				t.Errorf("restoring %q as it was: %v", tc.name, err)
			}
		}
	})
}

// The value of a state with a time-to-live evolves as any state value.
func TestTheValuesOfATableWithATimeToLiveEvolve(t *testing.T) {
	eachBackend(t, func(t *testing.T, k backendKind) {
		type v1 struct{ Count int32 }
		type v2 struct {
			Count int64
			Max   int64 `codec:"default=-1"`
		}
		c := &clock{now: 100}
		b := k.make(t)
		NewTTLValues(ttlTableOf[Stamped[v1]](t, b, "v"), TTL{Millis: 1000, Now: c.Now}).Put(shardOf("a"), "a", v1{Count: 3})
		tb := ttlTableOf[Stamped[v2]](t, k.restart(t, b), "v")
		if got, _ := tb.Get(shardOf("a"), "a"); got != (Stamped[v2]{Value: v2{Count: 3, Max: -1}, Stamp: 100}) {
			t.Fatalf("restored %+v, want count 3, max -1, stamp 100", got)
		}
	})
}

func TestListElementsExpireOneByOne(t *testing.T) {
	eachBackend(t, func(t *testing.T, k backendKind) {
		for _, onRead := range []bool{false, true} {
			c := &clock{}
			tb := ttlTableOf[StampedList[int64]](t, k.make(t), "l")
			l := NewTTLLists(tb, TTL{Millis: 1000, OnRead: onRead, Now: c.Now})
			s := shardOf("a")
			l.Add(s, "a", 1)
			c.now = 600
			l.Add(s, "a", 2)
			c.now = 900
			if got := l.Get(s, "a"); !slices.Equal(got, []int64{1, 2}) {
				t.Fatalf("onRead %v: at 900 got %v, want [1 2]", onRead, got)
			}
			c.now = 1000
			want := []int64{2}
			if onRead {
				want = []int64{1, 2} // both read at 900
			}
			if got := l.Get(s, "a"); !slices.Equal(got, want) {
				t.Fatalf("onRead %v: at 1000 got %v, want %v", onRead, got, want)
			}
			if stored, _ := tb.Get(s, "a"); len(stored.Values) != len(want) {
				t.Fatalf("onRead %v: %d elements stored, want %d", onRead, len(stored.Values), len(want))
			}
			c.now = 3000
			if got := l.Get(s, "a"); got != nil {
				t.Fatalf("onRead %v: at 3000 got %v, want nothing", onRead, got)
			}
			if tb.Len() != 0 {
				t.Fatalf("onRead %v: a list of expired elements is still stored", onRead)
			}
		}
	})
}

// ttlMaps returns map state "m" of backend kind k with a time-to-live of
// a second on clock c, and the table under it.
func ttlMaps(t *testing.T, k backendKind, c *clock) (*TTLMaps[string, string, int64], *Table[string, map[string]Stamped[int64]]) {
	tb := ttlTableOf[map[string]Stamped[int64]](t, k.make(t), "m")
	return NewTTLMaps(tb, TTL{Millis: 1000, Now: c.Now}), tb
}

func TestMapEntriesExpireOneByOne(t *testing.T) {
	eachBackend(t, func(t *testing.T, k backendKind) {
		c := &clock{}
		m, tb := ttlMaps(t, k, c)
		s := shardOf("a")
		m.Put(s, "a", "x", 1)
		c.now = 600
		m.Put(s, "a", "y", 2)
		c.now = 1000
		if _, ok := m.Get(s, "a", "x"); ok {
			t.Fatal("x, put at 0, is there at 1000")
		}
		if got, ok := m.Get(s, "a", "y"); !ok || got != 2 {
			t.Fatalf("y got %d %v, want 2", got, ok)
		}
		m.Put(s, "a", "x", 3) // back, and lives from 1000
		c.now = 1600
		var seen []string
		m.All(s, "a", func(uk string, _ int64) bool {
			seen = append(seen, uk)
			return true
		})
		if !slices.Equal(seen, []string{"x"}) || m.Len(s, "a") != 1 {
			t.Fatalf("at 1600 All saw %v, Len %d, want x alone", seen, m.Len(s, "a"))
		}
		c.now = 2000
		if n := m.Len(s, "a"); n != 0 || tb.Len() != 0 {
			t.Fatalf("at 2000 Len %d with %d keys stored, want none", n, tb.Len())
		}
	})
}

func TestAComputeSeesNoExpiredEntryAndRestartsTheTimeToLive(t *testing.T) {
	eachBackend(t, func(t *testing.T, k backendKind) {
		c := &clock{}
		m, _ := ttlMaps(t, k, c)
		s := shardOf("a")
		add := func(old int64, ok bool) int64 {
			if ok {
				return old + 10
			}
			return 1
		}
		m.Compute(s, "a", "x", add) // new: 1, lives from 0
		c.now = 600
		m.Compute(s, "a", "x", add) // 11, lives from 600
		c.now = 1500
		if got, ok := m.Get(s, "a", "x"); !ok || got != 11 {
			t.Fatalf("at 1500 x is %d %v, want 11: a Compute at 600 restarts its time to live", got, ok)
		}
		c.now = 3000
		m.Compute(s, "a", "x", add) // expired: new again
		if got, _ := m.Get(s, "a", "x"); got != 1 {
			t.Fatalf("a Compute on an expired entry made %d, want 1 (as if none)", got)
		}
	})
}

func TestMapReadsRestartTheTimeToLiveOnReadAndWrite(t *testing.T) {
	eachBackend(t, func(t *testing.T, k backendKind) {
		c := &clock{}
		m := NewTTLMaps(ttlTableOf[map[string]Stamped[int64]](t, k.make(t), "m"), TTL{Millis: 1000, OnRead: true, Now: c.Now})
		s := shardOf("a")
		m.Put(s, "a", "x", 1)
		m.Put(s, "a", "y", 2)
		c.now = 600
		m.Get(s, "a", "x")
		c.now = 1200
		m.All(s, "a", func(string, int64) bool { return true }) // sees x alone, and refreshes it
		c.now = 2100
		if _, ok := m.Get(s, "a", "x"); !ok {
			t.Fatal("x, read at 1200, expired at 2100")
		}
		if _, ok := m.Get(s, "a", "y"); ok {
			t.Fatal("y, never read, is there at 2100")
		}
	})
}

// Refreshing stamps in place on a read must not reach a snapshot taken
// before it.
func TestReadsAfterASnapshotLeaveItsStampsAlone(t *testing.T) {
	eachBackend(t, func(t *testing.T, k backendKind) {
		c := &clock{}
		b := k.make(t)
		ttl := TTL{Millis: 1000, OnRead: true, Now: c.Now}
		l := NewTTLLists(ttlTableOf[StampedList[int64]](t, b, "l"), ttl)
		m := NewTTLMaps(ttlTableOf[map[string]Stamped[int64]](t, b, "m"), ttl)
		s := shardOf("a")
		l.Add(s, "a", 1)
		m.Put(s, "a", "x", 1)
		enc, err := b.Snapshot(SnapshotOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c.now = 500
		l.Get(s, "a")
		m.Get(s, "a", "x")
		m.All(s, "a", func(string, int64) bool { return true })

		e, err := enc(nil)
		if err != nil {
			t.Fatal(err)
		}
		nb := k.restore(t, e)
		c.now = 1000
		if got := NewTTLLists(ttlTableOf[StampedList[int64]](t, nb, "l"), ttl).Get(s, "a"); got != nil {
			t.Errorf("the snapshot's list was read at 500: got %v at 1000", got)
		}
		if _, ok := NewTTLMaps(ttlTableOf[map[string]Stamped[int64]](t, nb, "m"), ttl).Get(s, "a", "x"); ok {
			t.Error("the snapshot's map entry was read at 500: it is there at 1000")
		}
	})
}
