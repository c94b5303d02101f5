package dedup

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/task"
)

// These tests drive one Deduplicate subtask directly (records, watermarks,
// snapshots and restores as the task would call them), so that watermarks
// land exactly where the test puts them.

// dupRec is a record with an identity (ID) and a serial number that tells
// its copies apart.
type dupRec struct {
	ID, N int64
}

// collected records what an operator emitted on one port.
type collected struct{ recs []dupRec }

func (c *collected) Collect(_ int64, v dupRec) { c.recs = append(c.recs, v) }

// testDedup is one operator instance with its outputs.
type testDedup struct {
	op        *dedupOp[int64, dupRec]
	out, late *collected
}

// dedupOpts describe an operator instance for newTestDedup.
type dedupOpts struct {
	horizon        int64 // milliseconds
	filter         bool
	expected       int
	fpRate         float64
	maxPar         int
	kgStart, kgEnd int
	restore        []byte
	stats          *Stats
}

func newTestDedup(t testing.TB, o dedupOpts) testDedup {
	t.Helper()
	if o.maxPar == 0 {
		o.maxPar, o.kgStart, o.kgEnd = 128, 0, 128
	}
	if o.expected == 0 {
		o.expected, o.fpRate = 1<<14, 0.01
	}
	kc, err := codec.For[int64]()
	if err != nil {
		t.Fatal(err)
	}
	node := &Node[int64, dupRec]{Key: func(r dupRec) int64 { return r.ID }, Keys: keyed.Keys[int64]{Codec: kc, Hash: keyed.Hasher(kc)},
		Horizon: o.horizon, Width: max(1, (o.horizon+1)/2),
		Config: Config{Expected: o.expected, FPRate: o.fpRate, Filter: o.filter, Stats: o.stats}}
	ctx := &task.Context{Operator: "dedup", Parallelism: 1, MaxParallelism: o.maxPar, KeyGroupStart: o.kgStart, KeyGroupEnd: o.kgEnd,
		Now: func() int64 { return 0 }}
	out, late := &collected{}, &collected{}
	b, err := node.Build(ctx, []any{task.Collector[dupRec](out), task.Collector[dupRec](late)})
	if err != nil {
		t.Fatal(err)
	}
	op := b.Op.(*dedupOp[int64, dupRec])
	if o.restore != nil {
		if err := op.Restore(o.restore); err != nil {
			t.Fatal(err)
		}
	}
	if err := op.Open(ctx); err != nil {
		t.Fatal(err)
	}
	return testDedup{op: op, out: out, late: late}
}

// snapshot returns the encoded state, as a checkpoint stores it.
func (d testDedup) snapshot(t testing.TB) []byte {
	t.Helper()
	enc, err := d.op.Snapshot(task.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := enc(nil)
	if err != nil {
		t.Fatal(err)
	}
	return e.Data
}

// dedupModel is the contract of Deduplicate written as plainly as
// possible: a map from key to the event time it was forwarded at.
type dedupModel struct {
	horizon int64
	wm      int64
	seen    map[int64]int64
	out     []dupRec
	late    []dupRec
}

func (m *dedupModel) record(ts int64, r dupRec) {
	switch t, ok := m.seen[r.ID]; {
	case ts+m.horizon <= m.wm:
		m.late = append(m.late, r)
	case ok && t+m.horizon > m.wm:
		// a duplicate
	default:
		m.seen[r.ID] = ts
		m.out = append(m.out, r)
	}
}

// checkExpired asserts the memory bound: every key held belongs to a
// generation that is not yet past its end plus the horizon.
func checkExpired(t *testing.T, op *dedupOp[int64, dupRec]) {
	t.Helper()
	for s := range op.seen.Shards() {
		op.seen.All(s, func(slot dedupSlot, ids map[int64]int64) bool {
			if addSat(op.genEnd(slot.Gen), op.Horizon) <= op.core.WM {
				t.Fatalf("generation %d (%d keys) is still held at watermark %d", slot.Gen, len(ids), op.core.WM)
			}
			for id, ts := range ids {
				if floorDiv(ts, op.Width) != slot.Gen {
					t.Fatalf("key %d at %d is stored in generation %d", id, ts, slot.Gen)
				}
			}
			return true
		})
	}
}

func TestDedupMatchesMapReference(t *testing.T) {
	for _, horizon := range []int64{1, 5, 40, 300} {
		for _, filter := range []bool{true, false} {
			for _, ids := range []int64{50, 2000} {
				seed := uint64(horizon*10 + ids)
				rng := rand.New(rand.NewPCG(seed, 7))
				stats := &Stats{}
				o := dedupOpts{horizon: horizon, filter: filter, expected: 256, fpRate: 0.05, stats: stats}
				d := newTestDedup(t, o)
				m := &dedupModel{horizon: horizon, wm: dataflow.MinWatermark, seen: map[int64]int64{}}
				var out, late []dupRec // of operators replaced by a restore
				var cursor, n int64
				var recent []struct{ ts, id int64 }
				restores := 0
				for step := range 30_000 {
					switch r := rng.IntN(100); {
					case r < 8: // a watermark, trailing the cursor by up to 2 horizons
						if wm := cursor - rng.Int64N(2*horizon+2); wm > m.wm {
							m.wm = wm
							d.op.Watermark(wm)
							checkExpired(t, d.op)
						}
					case r < 40 && len(recent) > 0: // a copy of a recent record
						c := recent[rng.IntN(len(recent))]
						n++
						m.record(c.ts, dupRec{c.id, n})
						d.op.Collect(c.ts, dupRec{c.id, n})
					default: // a record, possibly out of order or late
						cursor += rng.Int64N(3)
						ts := cursor - rng.Int64N(2*horizon+2)
						id := rng.Int64N(ids)
						n++
						m.record(ts, dupRec{id, n})
						d.op.Collect(ts, dupRec{id, n})
						recent = append(recent, struct{ ts, id int64 }{ts, id})
						if len(recent) > 64 {
							recent = recent[1:]
						}
					}
					if step%997 == 0 {
						enc := d.snapshot(t) // copy-on-write from here on
						if rng.IntN(4) == 0 {
							out, late = append(out, d.out.recs...), append(late, d.late.recs...)
							o.restore = enc
							d = newTestDedup(t, o)
							d.op.Watermark(m.wm) // the watermark is not part of the state
							restores++
						}
					}
				}
				out, late = append(out, d.out.recs...), append(late, d.late.recs...)
				if err := d.op.Close(); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(out, m.out) {
					t.Fatalf("horizon %d, filter %v, %d ids: forwarded %d records, the reference %d; first difference at %d",
						horizon, filter, ids, len(out), len(m.out), firstDiff(out, m.out))
				}
				if !slices.Equal(late, m.late) {
					t.Fatalf("horizon %d, filter %v: %d late records, the reference %d", horizon, filter, len(late), len(m.late))
				}
				c := stats.Counts()
				if c.Records != n || c.Forwarded != int64(len(m.out)) || c.Late != int64(len(m.late)) {
					t.Fatalf("counts %+v, want %d records, %d forwarded, %d late", c, n, len(m.out), len(m.late))
				}
				if c.Duplicates == 0 || restores == 0 {
					t.Fatalf("the input had no duplicates (%d) or no restore happened (%d): the test proved nothing", c.Duplicates, restores)
				}
				if filter && c.FilterNegatives == 0 {
					t.Fatalf("the filter never saved a lookup: %+v", c)
				}
				if !filter && (c.FilterNegatives != 0 || c.FalsePositives != 0) {
					t.Fatalf("without the filter: %+v", c)
				}
			}
		}
	}
}

func firstDiff(a, b []dupRec) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestDedupExpiresAtTheHorizon(t *testing.T) {
	for _, filter := range []bool{true, false} {
		stats := &Stats{}
		d := newTestDedup(t, dedupOpts{horizon: 10, filter: filter, stats: stats})
		d.op.Collect(100, dupRec{1, 1})
		d.op.Collect(100, dupRec{1, 2}) // a copy
		d.op.Collect(95, dupRec{1, 3})  // out of order, still the same key
		d.op.Watermark(109)
		d.op.Collect(100, dupRec{1, 4}) // remembered until the watermark reaches 110
		d.op.Watermark(110)
		d.op.Collect(100, dupRec{1, 5}) // late: 100+10 <= 110
		d.op.Collect(101, dupRec{2, 6}) // on time, new
		d.op.Collect(104, dupRec{1, 7}) // on time; key 1 is forgotten
		d.op.Collect(104, dupRec{1, 8}) // remembered again
		want := []dupRec{{1, 1}, {2, 6}, {1, 7}}
		if !slices.Equal(d.out.recs, want) {
			t.Fatalf("filter %v: forwarded %v, want %v", filter, d.out.recs, want)
		}
		if !slices.Equal(d.late.recs, []dupRec{{1, 5}}) {
			t.Fatalf("late %v, want [{1 5}]", d.late.recs)
		}
		d.op.Watermark(200)
		d.op.publish()
		c := stats.Counts()
		if c.Duplicates != 4 || c.Late != 1 || c.Forwarded != 3 {
			t.Fatalf("counts %+v", c)
		}
		if c.IDs != 0 || c.FilterBits != 0 || d.op.seen.Len() != 0 || len(d.op.live) != 0 {
			t.Fatalf("after the watermark passed every horizon: %d ids, %d filter bits, %d slots, generations %v",
				c.IDs, c.FilterBits, d.op.seen.Len(), d.op.live)
		}
	}
}

func TestDedupRestoreRebuildsTheFilter(t *testing.T) {
	const n = 5000
	d := newTestDedup(t, dedupOpts{horizon: int64(time.Hour / time.Millisecond), filter: true})
	for i := range int64(n) {
		d.op.Collect(i, dupRec{i, i})
	}
	enc := d.snapshot(t)
	stats := &Stats{}
	r := newTestDedup(t, dedupOpts{horizon: int64(time.Hour / time.Millisecond), filter: true, restore: enc, stats: stats})
	if c := stats.Counts(); c.Rebuilt != n || c.IDs != n || c.FilterBits == 0 {
		t.Fatalf("after the restore: %+v, want %d keys rebuilt", c, n)
	}
	for i := range int64(n) { // every key again: all duplicates
		r.op.Collect(i, dupRec{i, n + i})
	}
	for i := range int64(n) { // new keys
		r.op.Collect(n+i, dupRec{n + i, 2*n + i})
	}
	r.op.publish()
	c := stats.Counts()
	if len(r.out.recs) != n || r.out.recs[0] != (dupRec{n, 2 * n}) || c.Duplicates != n {
		t.Fatalf("forwarded %d records (first %v), %d duplicates; want only the %d new keys", len(r.out.recs), r.out.recs[0], c.Duplicates, n)
	}
	// A filter that was not rebuilt would answer "no" for the restored keys
	// and let their copies through; a rebuilt one answers "no" only for
	// new keys, and the exact state confirms every "maybe".
	if c.FilterNegatives < n/2 {
		t.Fatalf("the rebuilt filter saved only %d exact lookups for %d new keys: %+v", c.FilterNegatives, n, c)
	}
}

func TestDedupRestoreSplitsByKeyGroup(t *testing.T) {
	const n = 2000
	whole := newTestDedup(t, dedupOpts{horizon: 1000, filter: true})
	for i := range int64(n) {
		whole.op.Collect(i, dupRec{i, i})
	}
	enc := whole.snapshot(t)
	var rebuilt int64
	for _, r := range [][2]int{{0, 50}, {50, 128}} {
		stats := &Stats{}
		part := newTestDedup(t, dedupOpts{horizon: 1000, filter: true, kgStart: r[0], kgEnd: r[1], maxPar: 128, restore: enc, stats: stats})
		var mine int64
		for i := range int64(n) {
			if kg := task.KeyGroup(task.HashUint64(uint64(i)), 128); kg >= r[0] && kg < r[1] {
				mine++
				part.op.Collect(i, dupRec{i, n + i}) // a copy: must be dropped
			}
		}
		part.op.publish()
		c := stats.Counts()
		if c.Rebuilt != mine || c.Duplicates != mine || len(part.out.recs) != 0 {
			t.Fatalf("key groups %v: rebuilt %d keys and dropped %d copies, forwarded %d; want %d, %d, 0", r, c.Rebuilt, c.Duplicates, len(part.out.recs), mine, mine)
		}
		rebuilt += c.Rebuilt
	}
	if rebuilt != n {
		t.Fatalf("the two halves restored %d keys, want %d", rebuilt, n)
	}
}

func TestDedupSnapshotIsNotChangedByLaterRecords(t *testing.T) {
	// One key group: every key shares one map.
	d := newTestDedup(t, dedupOpts{horizon: 1000, filter: true, maxPar: 1, kgEnd: 1})
	d.op.Collect(10, dupRec{1, 1})
	enc, err := d.op.Snapshot(task.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.op.Collect(10, dupRec{2, 2})
	for i := int64(3); i < 200; i++ {
		d.op.Collect(10, dupRec{i, i})
	}
	stats := &Stats{}
	e, err := enc(nil)
	if err != nil {
		t.Fatal(err)
	}
	r := newTestDedup(t, dedupOpts{horizon: 1000, filter: true, maxPar: 1, kgEnd: 1, restore: e.Data, stats: stats})
	r.op.Collect(10, dupRec{1, 300})
	r.op.Collect(10, dupRec{2, 301})
	if c := stats.Counts(); c.Rebuilt != 1 {
		t.Fatalf("the snapshot restored %d keys, want the 1 before it was taken", c.Rebuilt)
	}
	if !slices.Equal(r.out.recs, []dupRec{{2, 301}}) {
		t.Fatalf("after the restore forwarded %v, want only key 2, which came after the snapshot", r.out.recs)
	}
}
