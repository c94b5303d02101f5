package state

import (
	"fmt"

	"github.com/weir-stream/weir/codec"
)

// State time-to-live, as Flink's StateTtlConfig with NeverReturnExpired
// visibility and processing time: an entry expires TTL.Millis after it
// was last written (or, with TTL.OnRead, read), and an expired entry is
// never returned.
//
// A table with a time-to-live stores each entry with the processing time
// of its last access (Stamped, StampedList, and maps of Stamped) in an
// ordinary Table, registered under TTLName, and reaches it through
// Table's methods only, so it works with any storage behind Table. The
// wrappers (TTLValues, TTLLists, TTLMaps) drop what expired when it is
// read, and sweep the table shard by shard as it is used (see TTL), so
// that entries never accessed again are dropped too; no storage needs a
// compaction filter of its own for them. In an LSM backend a sweep is a
// scan of one key group in the store (Table.All, which first writes the
// cached changes through), and its deletes reach the store as any
// others; the store's compaction then reclaims their space.
//
// Entries expired but not swept yet are still written to checkpoints
// and are dropped after a restore when read or swept. The stamps are
// absolute times: a restore keeps each entry's age, and a restore with
// another TTL applies the new one to every entry.
//
// A state's entries with and without a time-to-live have different
// types, so a restore cannot add or remove one: Backend.CheckTTL refuses
// it with an error wrapping codec.ErrIncompatible.

// TTL says how long the entries of a table live.
type TTL struct {
	// Millis is the time-to-live in milliseconds; positive.
	Millis int64
	// OnRead makes reads restart an entry's time-to-live too (Flink's
	// OnReadAndWrite); otherwise only creating and writing it do
	// (OnCreateAndWrite).
	OnRead bool
	// Now returns the processing time in epoch milliseconds.
	Now func() int64
	// SweepEvery is the least number of accesses between two sweeps of
	// a shard; zero means DefaultSweepEvery.
	SweepEvery int
}

// DefaultSweepEvery is TTL.SweepEvery's default.
const DefaultSweepEvery = 128

// expired reports whether an entry last accessed at stamp has expired at
// now. A stamp after now (a clock that went back) has not.
func (t TTL) expired(stamp, now int64) bool { return now-stamp >= t.Millis }

// Stamped is a value with the processing time of its last access, the
// entry of a value table (and of each map entry) with a time-to-live.
type Stamped[V any] struct {
	Value V
	Stamp int64
}

// StampedList is a list whose elements each have the processing time of
// their last access: elements of a list expire one by one. Values and
// Stamps have the same length.
type StampedList[V any] struct {
	Values []V
	Stamps []int64
}

// ttlSuffix ends the name a table with a time-to-live is registered
// under: its entries are not those of a table without one.
const ttlSuffix = "\x00ttl"

// TTLName returns the name under which the table of the state name with
// a time-to-live is registered.
func TTLName(name string) string { return name + ttlSuffix }

// CheckTTL fails when the state name is registered, or was restored,
// with a time-to-live and ttl is false, or without one and ttl is true.
// The registration of a keyed state calls it before Register. The error
// wraps codec.ErrIncompatible: like a type changed incompatibly, a
// restore meets it again on every attempt.
func (b *Backend) CheckTTL(name string, ttl bool) error {
	other, was := name, "without"
	if !ttl {
		other, was = TTLName(name), "with"
	}
	if _, ok := b.parts[other]; ok {
		return fmt.Errorf("state %q is already registered %s a time-to-live", name, was)
	}
	restored := false
	if _, ok := b.restored[other]; ok {
		restored = true
	} else if b.lsm != nil {
		// A checkpoint of an LSM store restores its tables in the store.
		if err := b.Open(); err != nil {
			return err
		}
		var err error
		if restored, err = b.lsm.recorded(other); err != nil {
			return fmt.Errorf("state %q: reading the store: %w", name, err)
		}
	}
	if restored {
		is := "with"
		if !ttl {
			is = "without"
		}
		return fmt.Errorf("state %q was checkpointed %s a time-to-live and is now declared %s one: a restore cannot add or remove a state's time-to-live (its entries hold their access times); give the state a new name to start it empty: %w",
			name, was, is, codec.ErrIncompatible)
	}
	return nil
}

// verdict is what pruning an entry found.
type verdict uint8

const (
	keep    verdict = iota // nothing expired
	rewrite                // some of it expired: store the pruned entry
	drop                   // all of it expired: delete the key
)

// ttlTable is what the tables with a time-to-live share: the clock, the
// expiry of whole keys on access and the sweep.
//
// The sweep: every access counts, and once as many accesses as the last
// sweep visited keys (at least SweepEvery) have passed since it, the next
// shard in round-robin order is swept: each of its keys is pruned. So the
// sweep costs about one key's pruning per access, and a table of n keys
// is swept in full every n accesses or so, however few of its keys are
// accessed. A table that is not accessed at all is not swept.
type ttlTable[K comparable, E any] struct {
	t     *Table[K, E]
	ttl   TTL
	prune func(e E, now int64) (E, verdict) // pruned must share no changed memory with e
	// Accesses since the last sweep, how many the next one waits for,
	// and the shard it sweeps.
	accesses, due, next int
}

func newTTLTable[K comparable, E any](t *Table[K, E], ttl TTL, prune func(E, int64) (E, verdict)) ttlTable[K, E] {
	if ttl.SweepEvery <= 0 {
		ttl.SweepEvery = DefaultSweepEvery
	}
	return ttlTable[K, E]{t: t, ttl: ttl, prune: prune, due: ttl.SweepEvery}
}

// access reads the clock for an access of the table, and sweeps a shard
// first when one is due.
func (c *ttlTable[K, E]) access() int64 {
	now := c.ttl.Now()
	if c.accesses++; c.accesses >= c.due {
		c.due = max(c.sweep(c.next, now), c.ttl.SweepEvery)
		c.accesses = 0
		c.next = (c.next + 1) % c.t.Shards()
	}
	return now
}

// sweep prunes every key of shard s and returns how many it visited.
func (c *ttlTable[K, E]) sweep(s int, now int64) int {
	type pruned struct {
		k K
		e E
	}
	var drops []K
	var rewrites []pruned
	n := 0
	c.t.All(s, func(k K, e E) bool {
		n++
		switch p, v := c.prune(e, now); v {
		case drop:
			drops = append(drops, k)
		case rewrite:
			rewrites = append(rewrites, pruned{k, p})
		}
		return true
	})
	for _, k := range drops {
		c.t.Delete(s, k)
	}
	for _, r := range rewrites {
		c.t.PutNew(s, r.k, r.e)
	}
	return n
}

// live returns k's entry with what expired of it removed (from the table
// too), and false when nothing of it is left.
func (c *ttlTable[K, E]) live(s int, k K, now int64) (E, bool) {
	e, ok := c.t.Get(s, k)
	if !ok {
		return e, false
	}
	switch p, v := c.prune(e, now); v {
	case drop:
		c.t.Delete(s, k)
		var zero E
		return zero, false
	case rewrite:
		c.t.PutNew(s, k, p)
		return p, true
	}
	return e, true
}

// Table returns the table that stores the entries with their stamps.
func (c *ttlTable[K, E]) Table() *Table[K, E] { return c.t }

// TTLValues is a table of values with a time-to-live, over a table of
// Stamped values. Like Table, it is used from the owner goroutine only,
// and every access names the key's shard.
type TTLValues[K comparable, V any] struct {
	ttlTable[K, Stamped[V]]
}

// NewTTLValues returns the values of t with the time-to-live ttl.
func NewTTLValues[K comparable, V any](t *Table[K, Stamped[V]], ttl TTL) *TTLValues[K, V] {
	return &TTLValues[K, V]{newTTLTable(t, ttl, func(e Stamped[V], now int64) (Stamped[V], verdict) {
		if ttl.expired(e.Stamp, now) {
			return e, drop
		}
		return e, keep
	})}
}

// Get returns the value of k in shard s unless it expired; with OnRead
// the read restarts its time-to-live.
func (t *TTLValues[K, V]) Get(s int, k K) (V, bool) {
	now := t.access()
	e, ok := t.live(s, k, now)
	if ok && t.ttl.OnRead && e.Stamp != now {
		t.t.Put(s, k, Stamped[V]{e.Value, now})
	}
	return e.Value, ok
}

// Put sets the value of k in shard s, which then lives for the TTL.
func (t *TTLValues[K, V]) Put(s int, k K, v V) {
	now := t.access()
	t.t.Put(s, k, Stamped[V]{v, now})
}

// Delete removes k from shard s.
func (t *TTLValues[K, V]) Delete(s int, k K) {
	t.access()
	t.t.Delete(s, k)
}
