package state

import (
	"errors"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/state/lsm"
)

func newMemFiles() *memFiles { return &memFiles{files: map[string][]byte{}} }

func incBackend(files *memFiles, r [2]int) *Backend {
	b := NewBackend(r[0], r[1], fixtureMaxPar)
	b.SetIncremental(Incremental{Files: files, From: -1})
	return b
}

func registerInt(t *testing.T, b *Backend, name string) *Table[int64, int64] {
	t.Helper()
	ic := codec.Int64()
	tb, err := Register(b, name, TableOptions[int64, int64]{Key: ic, Value: ic, KeyGroup: fixtureKG})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// filledInc returns an incremental backend whose table "t" holds k=k for
// k < n.
func filledInc(t *testing.T, n int64) (*memFiles, *Backend, *Table[int64, int64]) {
	t.Helper()
	files := newMemFiles()
	b := incBackend(files, [2]int{0, fixtureMaxPar})
	tb := registerInt(t, b, "t")
	for k := range n {
		tb.Put(b.Shard(fixtureKG(k)), k, k)
	}
	return files, b, tb
}

// afterASnapshot returns a backend whose table "t" held 1=10 at its first
// snapshot and has 2=20 written since.
func afterASnapshot(t *testing.T) (*memFiles, *Backend, *Table[int64, int64]) {
	t.Helper()
	files := newMemFiles()
	b := incBackend(files, [2]int{0, fixtureMaxPar})
	tb := registerInt(t, b, "t")
	tb.Put(b.Shard(fixtureKG(1)), 1, 10)
	snap(t, b)
	tb.Put(b.Shard(fixtureKG(2)), 2, 20)
	return files, b, tb
}

// restoredContents restores data in a backend of every key group and
// returns the entries of its table "t".
func restoredContents(t *testing.T, files *memFiles, data []byte) map[int64]int64 {
	t.Helper()
	nb := incBackend(files, [2]int{0, fixtureMaxPar})
	if err := nb.Restore(data); err != nil {
		t.Fatal(err)
	}
	return tableContents(registerInt(t, nb, "t"))
}

func tableContents(tb *Table[int64, int64]) map[int64]int64 {
	got := map[int64]int64{}
	for s := range tb.Shards() {
		tb.All(s, func(k, v int64) bool { got[k] = v; return true })
	}
	return got
}

func TestIncrementalSnapshotsRestoreWhatTheTableHeldAtEachOne(t *testing.T) {
	files := newMemFiles()
	b := incBackend(files, [2]int{0, fixtureMaxPar})
	tb := registerInt(t, b, "t")
	model := map[int64]int64{}
	rng := rand.New(rand.NewPCG(1, 2))
	type taken struct {
		data []byte
		want map[int64]int64
	}
	var snaps []taken
	for round := range 60 {
		for range 1 + rng.IntN(200) {
			k := rng.Int64N(500)
			s := b.Shard(fixtureKG(k))
			switch rng.IntN(4) {
			case 0:
				tb.Delete(s, k)
				delete(model, k)
			default:
				v := int64(round*1000) + rng.Int64N(1000)
				tb.Put(s, k, v)
				model[k] = v
			}
		}
		snaps = append(snaps, taken{snap(t, b), maps.Clone(model)})
	}
	for i, s := range snaps {
		for _, r := range fixtureRanges(3) { // and at another parallelism
			nb := incBackend(files, r)
			if err := nb.Restore(s.data); err != nil {
				t.Fatalf("snapshot %d: %v", i, err)
			}
			got := tableContents(registerInt(t, nb, "t"))
			for k, v := range s.want {
				if g := fixtureKG(k); g >= r[0] && g < r[1] && got[k] != v {
					t.Errorf("snapshot %d, key groups %v: key %d = %d, want %d", i, r, k, got[k], v)
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

func TestADeltaSnapshotUploadsOnlyWhatChanged(t *testing.T) {
	files, b, tb := filledInc(t, 10000)
	first := snap(t, b)
	full := files.bytes
	tb.Put(b.Shard(fixtureKG(7)), 7, -7)
	tb.Delete(b.Shard(fixtureKG(8)), 8)
	e := encodeAll(t, b, SnapshotOptions{})
	second := e.Data
	if len(e.Shared) != 2 || e.SharedBytes != files.bytes || e.Uploaded != files.bytes-full {
		t.Errorf("the second snapshot names %d files of %d bytes and uploaded %d; want 2 of %d and %d", len(e.Shared), e.SharedBytes, e.Uploaded, files.bytes, files.bytes-full)
	}
	if files.puts != 2 {
		t.Fatalf("%d files uploaded after two snapshots, want 2 (a base and a delta)", files.puts)
	}
	if delta := files.bytes - full; delta*100 > full {
		t.Errorf("the delta of two changes is %d bytes, the base %d", delta, full)
	}
	if len(second) > len(first)+64 {
		t.Errorf("the second snapshot is %d bytes, the first %d: it should only name one more file", len(second), len(first))
	}
}

func TestASnapshotWhoseEncoderNeverRanIsUploadedByTheNext(t *testing.T) {
	files, b, tb := afterASnapshot(t)
	if _, err := b.Snapshot(SnapshotOptions{}); err != nil { // abandoned: never encoded
		t.Fatal(err)
	}
	tb.Put(b.Shard(fixtureKG(3)), 3, 30)
	data := snap(t, b)
	if got, want := restoredContents(t, files, data), map[int64]int64{1: 10, 2: 20, 3: 30}; !maps.Equal(got, want) {
		t.Errorf("restored %v, want %v", got, want)
	}
}

func TestAFailedUploadFailsTheSnapshotAndTheNextIsFull(t *testing.T) {
	files, b, tb := afterASnapshot(t)
	files.failPut = true
	enc, err := b.Snapshot(SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc(nil); err == nil {
		t.Fatal("a snapshot whose upload failed succeeded")
	}
	files.failPut = false
	before := files.puts
	tb.Put(b.Shard(fixtureKG(3)), 3, 30)
	data := snap(t, b)
	if files.puts != before+1 {
		t.Fatalf("%d files uploaded after the failure, want 1 (a new base)", files.puts-before)
	}
	if got, want := restoredContents(t, files, data), map[int64]int64{1: 10, 2: 20, 3: 30}; !maps.Equal(got, want) {
		t.Errorf("restored %v, want %v", got, want)
	}
}

func TestAMissingOrAlteredChainFileIsCorrupt(t *testing.T) {
	files, b, _ := afterASnapshot(t)
	data := snap(t, b)
	for name, body := range files.files {
		for _, alter := range []func(){
			func() { delete(files.files, name) },
			func() { files.files[name] = append(append([]byte(nil), body...), 0) },
		} {
			alter()
			err := incBackend(files, [2]int{0, fixtureMaxPar}).Restore(data)
			if !errors.Is(err, lsm.ErrCorrupt) {
				t.Errorf("restoring with file %s altered: %v, want an error wrapping lsm.ErrCorrupt", name, err)
			}
			files.files[name] = body
		}
	}
	if err := NewBackend(0, fixtureMaxPar, fixtureMaxPar).Restore(data); err == nil {
		t.Error("a backend without shared files restored a snapshot that names some")
	}
}

func TestAnUnclaimedChainIsCarriedIntoTheNextSnapshot(t *testing.T) {
	files := newMemFiles()
	b := incBackend(files, [2]int{0, fixtureMaxPar})
	tb := registerInt(t, b, "t")
	for k := range int64(40) {
		tb.Put(b.Shard(fixtureKG(k)), k, 100+k)
	}
	snap(t, b)
	tb.Delete(b.Shard(fixtureKG(3)), 3)
	tb.Put(b.Shard(fixtureKG(4)), 4, -4)
	data := snap(t, b)
	for _, r := range fixtureRanges(2) {
		carrier := incBackend(files, r)
		if err := carrier.Restore(data); err != nil {
			t.Fatal(err)
		}
		carried := snap(t, carrier) // "t" never registered
		nb := incBackend(files, r)
		if err := nb.Restore(carried); err != nil {
			t.Fatal(err)
		}
		got := tableContents(registerInt(t, nb, "t"))
		want := map[int64]int64{}
		for k := range int64(40) {
			if g := fixtureKG(k); g >= r[0] && g < r[1] && k != 3 {
				want[k] = 100 + k
			}
		}
		if _, ok := want[4]; ok {
			want[4] = -4
		}
		if !maps.Equal(got, want) {
			t.Errorf("key groups %v: restored %v, want %v", r, got, want)
		}
	}
}

func TestADeltaHoldsValuesChangedInPlaceAfterAGet(t *testing.T) {
	files := newMemFiles()
	sc, err := codec.For[[]int64]()
	if err != nil {
		t.Fatal(err)
	}
	open := func(b *Backend) *Table[int64, []int64] {
		tb, err := Register(b, "lists", TableOptions[int64, []int64]{Key: codec.Int64(), Value: sc, KeyGroup: fixtureKG, InPlace: true})
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	b := incBackend(files, [2]int{0, fixtureMaxPar})
	tb := open(b)
	for k := range int64(20) {
		tb.Put(b.Shard(fixtureKG(k)), k, []int64{k, 0})
	}
	snap(t, b)
	v, _ := tb.Get(b.Shard(fixtureKG(5)), 5)
	v[1] = 55 // in place, as a user's accumulator may be changed
	data := snap(t, b)
	v[1] = 66 // after the snapshot: not in it
	nb := incBackend(files, [2]int{0, fixtureMaxPar})
	if err := nb.Restore(data); err != nil {
		t.Fatal(err)
	}
	got, _ := open(nb).Get(nb.Shard(fixtureKG(5)), 5)
	if len(got) != 2 || got[1] != 55 {
		t.Errorf("restored %v for key 5, want [5 55]", got)
	}
}

func TestASmallTableIsWrittenWholeUntilItGrows(t *testing.T) {
	files := newMemFiles()
	b := NewBackend(0, fixtureMaxPar, fixtureMaxPar)
	b.SetIncremental(Incremental{Files: files, From: 1000})
	tb := registerInt(t, b, "t")
	tb.Put(b.Shard(fixtureKG(1)), 1, 1)
	snap(t, b)
	snap(t, b)
	if files.puts != 0 {
		t.Fatalf("a table of one entry uploaded %d files", files.puts)
	}
	for k := range int64(1000) {
		tb.Put(b.Shard(fixtureKG(k)), k, k)
	}
	snap(t, b)
	if files.puts != 1 {
		t.Fatalf("%d files uploaded once the table grew, want 1 (a base, not the table whole once more before it)", files.puts)
	}
	tb.Put(b.Shard(fixtureKG(1)), 1, 11)
	data := snap(t, b)
	if files.puts != 2 {
		t.Fatalf("%d files uploaded after a change, want 2 (a base and a delta)", files.puts)
	}
	if got := restoredContents(t, files, data); len(got) != 1000 || got[1] != 11 {
		t.Errorf("restored %d entries, key 1 = %d; want 1000 and 11", len(got), got[1])
	}
}

// A large table's first snapshot is its chain's base already: its size is
// estimated from a sample of its entries.
func TestALargeTablesFirstSnapshotIsItsChainsBase(t *testing.T) {
	files := newMemFiles()
	b := NewBackend(0, fixtureMaxPar, fixtureMaxPar)
	b.SetIncremental(Incremental{Files: files, From: 1000})
	tb := registerInt(t, b, "t")
	for k := range int64(1000) {
		tb.Put(b.Shard(fixtureKG(k)), k, k)
	}
	snap(t, b)
	tb.Put(b.Shard(fixtureKG(1)), 1, 11)
	data := snap(t, b)
	if files.puts != 2 {
		t.Fatalf("%d files uploaded by two snapshots of a large table, want 2 (a base and a delta)", files.puts)
	}
	if got := restoredContents(t, files, data); len(got) != 1000 || got[1] != 11 {
		t.Errorf("restored %d entries, key 1 = %d; want 1000 and 11", len(got), got[1])
	}
}

func TestThePebbleBackendRestoresAMemoryChain(t *testing.T) {
	files, b, tb := filledInc(t, 30)
	snap(t, b)
	tb.Delete(b.Shard(fixtureKG(2)), 2)
	tb.Put(b.Shard(fixtureKG(3)), 3, 33)
	data := snap(t, b)
	lb := newLSM(t, lsmEnv(t, 100), files, 0, fixtureMaxPar, fixtureMaxPar)
	if err := lb.Restore(data); err != nil {
		t.Fatal(err)
	}
	if err := lb.Open(); err != nil {
		t.Fatal(err)
	}
	lt := registerInt(t, lb, "t")
	for k := range int64(30) {
		v, ok := lt.Get(lb.Shard(fixtureKG(k)), k)
		want, wok := k, k != 2
		if k == 3 {
			want = 33
		}
		if ok != wok || (ok && v != want) {
			t.Errorf("key %d: got %d (%v), want %d (%v)", k, v, ok, want, wok)
		}
	}
}

// A savepoint leaves the chain as it was, and so what the table recorded
// as written since the last checkpoint: the checkpoint after it holds the
// values written before the savepoint, in a plain table and in a
// MapTable's entries.
func TestTheCheckpointAfterASavepointHoldsWhatWasWrittenBeforeIt(t *testing.T) {
	files, b, tb := filledInc(t, 10)
	m := registerMaps(t, b)
	s := b.Shard(fixtureKG(1))
	m.Put(s, 1, 1, "one")
	snap(t, b)
	tb.Put(s, 1, 100)
	m.Put(s, 1, 2, "two")
	enc, err := b.Snapshot(SnapshotOptions{Savepoint: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc(nil); err != nil {
		t.Fatal(err)
	}
	data := snap(t, b)
	if got := restoredContents(t, files, data); got[1] != 100 {
		t.Errorf("key 1 = %d after a savepoint between two checkpoints, want 100", got[1])
	}
	nb := incBackend(files, [2]int{0, fixtureMaxPar})
	if err := nb.Restore(data); err != nil {
		t.Fatal(err)
	}
	if got, _ := registerMaps(t, nb).Table().Get(s, 1); len(got) != 2 || got[2] != "two" {
		t.Errorf("map 1 = %v after a savepoint between two checkpoints, want 1:one 2:two", got)
	}
}

// sharedFiles takes a snapshot of b and returns how many files of the
// job's shared files it names, and how many of them it uploaded.
func sharedFiles(t *testing.T, b *Backend, files *memFiles) (named, uploaded int) {
	t.Helper()
	before := files.puts
	e := encodeAll(t, b, SnapshotOptions{})
	return len(e.Shared), files.puts - before
}

// A table that only gains keys chains a delta per snapshot, up to the
// most deltas a chain holds, though the deltas outgrow the base: they
// hold nothing a restore would read in vain. Its last snapshot restores.
func TestAGrowingTableChainsDeltasWithoutRewritingItsBase(t *testing.T) {
	files, b, tb := filledInc(t, 1000)
	if named, _ := sharedFiles(t, b, files); named != 1 {
		t.Fatalf("the first snapshot names %d files, want 1 (the base)", named)
	}
	next := int64(1000)
	for i := range maxDeltas {
		for range 2000 {
			tb.Put(b.Shard(fixtureKG(next)), next, next)
			next++
		}
		named, uploaded := sharedFiles(t, b, files)
		if named != i+2 || uploaded != 1 {
			t.Fatalf("snapshot %d names %d files and uploaded %d; want %d and 1 (a delta more)", i+2, named, uploaded, i+2)
		}
	}
	for range 10 {
		tb.Put(b.Shard(fixtureKG(next)), next, next)
		next++
	}
	if named, _ := sharedFiles(t, b, files); named != 1 {
		t.Fatalf("the snapshot after %d deltas names %d files, want 1 (a new base)", maxDeltas, named)
	}
	nb := incBackend(files, [2]int{0, fixtureMaxPar})
	if err := nb.Restore(snap(t, b)); err != nil {
		t.Fatal(err)
	}
	got := tableContents(registerInt(t, nb, "t"))
	if int64(len(got)) != next {
		t.Fatalf("restored %d keys, want %d", len(got), next)
	}
	for k, v := range got {
		if v != k {
			t.Fatalf("restored %d=%d", k, v)
		}
	}
}

// A table whose keys are written again and again gets a new base once its
// files add up to more than twice its entries: a restore reads at most
// about twice the state.
func TestOverwritingDeltasGetANewBaseOnceTheyOutgrowTheState(t *testing.T) {
	files, b, tb := filledInc(t, 1000)
	sharedFiles(t, b, files)
	for round := int64(1); round <= 3; round++ {
		for k := range int64(1000) {
			tb.Put(b.Shard(fixtureKG(k)), k, k+round<<20)
		}
		if named, _ := sharedFiles(t, b, files); named == 1 {
			return
		}
	}
	t.Fatal("three deltas overwriting every key were chained to the base, none written as a new base")
}

// A delta restores each key at its last value, and holds a key written
// thousands of times since the snapshot before once.
func TestAKeyWrittenAgainAndAgainIsRestoredAtItsLastValueAndWrittenOnce(t *testing.T) {
	files, b, tb := filledInc(t, 1000)
	sharedFiles(t, b, files)
	base := files.bytes
	for _, writes := range []int{10, 5000} {
		for i := range writes {
			tb.Put(b.Shard(fixtureKG(7)), 7, int64(i))
			tb.Put(b.Shard(fixtureKG(8)), 8, int64(i))
			if i == writes-2 {
				tb.Delete(b.Shard(fixtureKG(8)), 8)
			}
		}
		tb.Put(b.Shard(fixtureKG(2000)), 2000, 1)
		before := files.bytes
		data := snap(t, b)
		if got, want := restoredContents(t, files, data), tableContents(tb); !maps.Equal(got, want) {
			t.Fatalf("after %d writes of two keys, restored %d entries differing from the table's %d", writes, len(got), len(want))
		}
		if got, want := restoredContents(t, files, data)[8], int64(writes-1); got != want {
			t.Fatalf("after %d writes, key 8 restored as %d, want %d (written after its deletion)", writes, got, want)
		}
		if writes > 10 {
			if delta := files.bytes - before; delta*100 > base {
				t.Errorf("the delta of three keys, two written %d times, is %d bytes; the base is %d", writes, delta, base)
			}
		}
		tb.Delete(b.Shard(fixtureKG(2000)), 2000)
	}
}
