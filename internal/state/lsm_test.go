package state

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/state/lsm"
)

// memFiles is a job's shared files in memory, counting what is put.
type memFiles struct {
	mu    sync.Mutex
	files map[string][]byte
	puts  int
	bytes int64
	gets  int
	// failPut fails every Put.
	failPut bool
}

func (f *memFiles) Put(_ context.Context, name string, data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failPut {
		return errors.New("injected upload failure")
	}
	if f.files == nil {
		f.files = map[string][]byte{}
	}
	f.files[name] = append([]byte(nil), data...)
	f.puts++
	f.bytes += int64(len(data))
	return nil
}

func (f *memFiles) Get(_ context.Context, name string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.files[name]
	if !ok {
		return nil, fmt.Errorf("no shared file %s", name)
	}
	f.gets++
	return append([]byte(nil), d...), nil
}

// lsmEnv returns an Env in a test directory with a small entry cache.
func lsmEnv(t testing.TB, cache int) *lsm.Env {
	t.Helper()
	env, err := lsm.NewEnv(lsm.Config{Dir: t.TempDir(), BlockCache: 64 << 20, MemTables: 8 << 20, Stores: 2, Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Close)
	return env
}

func newLSM(t testing.TB, env *lsm.Env, files lsm.Files, start, end, maxPar int) *Backend {
	t.Helper()
	b := NewLSMBackend(start, end, maxPar, LSMOptions{Env: func() (*lsm.Env, error) { return env, nil }, Files: files, Key: fmt.Sprintf("job/op/%d-%d", start, end)})
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return b
}

func kg8(k int64) int { return int(uint64(k) % 8) }

func counts(t testing.TB, b *Backend) *Table[int64, int64] {
	t.Helper()
	tb, err := Register(b, "counts", TableOptions[int64, int64]{Key: codec.Int64(), Value: codec.Int64(), KeyGroup: kg8})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func contents(t testing.TB, tb *Table[int64, int64]) map[int64]int64 {
	t.Helper()
	out := map[int64]int64{}
	for s := range tb.Shards() {
		tb.All(s, func(k, v int64) bool { out[k] = v; return true })
	}
	return out
}

func encodeAll(t testing.TB, b *Backend, o SnapshotOptions) Encoded {
	t.Helper()
	enc, err := b.Snapshot(o)
	if err != nil {
		t.Fatal(err)
	}
	e, err := enc(nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestLSMBackendRestoresWhatItCheckpointed(t *testing.T) {
	env, files := lsmEnv(t, 100), &memFiles{}
	b := newLSM(t, env, files, 0, 8, 8)
	tb := counts(t, b)
	want := map[int64]int64{}
	for k := range int64(1000) {
		tb.Put(b.Shard(kg8(k)), k, k*10)
		want[k] = k * 10
		if err := b.Settle(); err != nil { // writes through past 100 cached entries
			t.Fatal(err)
		}
	}
	tb.Delete(b.Shard(kg8(7)), 7)
	delete(want, 7)
	e := encodeAll(t, b, SnapshotOptions{})
	if len(e.Shared) == 0 || files.puts != len(e.Shared) {
		t.Fatalf("the checkpoint names %d shared files and put %d", len(e.Shared), files.puts)
	}
	tb.Put(b.Shard(kg8(1)), 1, -1) // after the snapshot: not in it

	r := newLSM(t, lsmEnv(t, 100), files, 0, 8, 8) // another worker: no local copies
	if err := r.Restore(e.Data); err != nil {
		t.Fatal(err)
	}
	if err := r.Open(); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, counts(t, r)); !maps.Equal(got, want) {
		t.Fatalf("restored %d entries, want %d (key 1: %d, key 7 present: %v)", len(got), len(want), got[1], got[7] != 0)
	}
	if st := r.RestoreStats(); st.Downloaded != len(e.Shared) || st.Local != 0 {
		t.Fatalf("restore on another worker: %+v, want all %d files downloaded", st, len(e.Shared))
	}
}

func TestLSMCheckpointsUploadOnlyNewFiles(t *testing.T) {
	env, files := lsmEnv(t, 1<<20), &memFiles{}
	b, tb := filledLSM(t, env, files, 20000)
	first := encodeAll(t, b, SnapshotOptions{})
	before, puts := files.bytes, files.puts
	tb.Put(b.Shard(kg8(3)), 3, 33)
	second := encodeAll(t, b, SnapshotOptions{})
	// The store may have compacted between the checkpoints (in the
	// background, when it chooses), rewriting files: what must hold is
	// that the second uploads exactly the files the first did not.
	old := map[string]bool{}
	for _, n := range first.Shared {
		old[n] = true
	}
	var fresh int
	var freshBytes int64
	for _, n := range second.Shared {
		if !old[n] {
			fresh++
			freshBytes += int64(len(files.files[n]))
		}
	}
	if fresh == 0 {
		t.Fatal("the second checkpoint refers to no new file, though a key changed")
	}
	if got := files.puts - puts; got != fresh {
		t.Errorf("the second checkpoint uploaded %d files, want the %d it refers to that the first did not", got, fresh)
	}
	if got := files.bytes - before; got != freshBytes {
		t.Errorf("the second checkpoint uploaded %d bytes, want the %d of its new files (the first uploaded %d)", got, freshBytes, before)
	}
}

func TestLSMRestoreOnTheSameWorkerUsesLocalFiles(t *testing.T) {
	env, files := lsmEnv(t, 1<<20), &memFiles{}
	b, _ := filledLSM(t, env, files, 5000)
	e := encodeAll(t, b, SnapshotOptions{})
	r := newLSM(t, env, files, 0, 8, 8)
	if err := r.Restore(e.Data); err != nil {
		t.Fatal(err)
	}
	if err := r.Open(); err != nil {
		t.Fatal(err)
	}
	if st := r.RestoreStats(); st.Local != len(e.Shared) || st.Downloaded != 0 || files.gets != 0 {
		t.Fatalf("restore on the same worker: %+v and %d downloads, want all %d files local", st, files.gets, len(e.Shared))
	}
	if got := len(contents(t, counts(t, r))); got != 5000 {
		t.Fatalf("restored %d entries, want 5000", got)
	}
}

func TestLSMRestoresAtAnotherParallelism(t *testing.T) {
	env, files := lsmEnv(t, 1<<20), &memFiles{}
	want := map[int64]int64{}
	var snaps [][]byte
	for _, r := range [][2]int{{0, 3}, {3, 8}} {
		b := newLSM(t, env, files, r[0], r[1], 8)
		tb := counts(t, b)
		for k := range int64(3000) {
			if kg := kg8(k); kg >= r[0] && kg < r[1] {
				tb.Put(b.Shard(kg), k, k+1)
				want[k] = k + 1
			}
		}
		snaps = append(snaps, encodeAll(t, b, SnapshotOptions{}).Data)
	}
	// Two subtasks into three: each takes its key groups of both.
	got := map[int64]int64{}
	for _, r := range [][2]int{{0, 2}, {2, 5}, {5, 8}} {
		b := newLSM(t, lsmEnv(t, 1<<20), files, r[0], r[1], 8)
		if err := b.Restore(snaps...); err != nil {
			t.Fatal(err)
		}
		if err := b.Open(); err != nil {
			t.Fatal(err)
		}
		for k, v := range contents(t, counts(t, b)) {
			if kg := kg8(k); kg < r[0] || kg >= r[1] {
				t.Fatalf("subtask of key groups %v holds key %d of key group %d", r, k, kg)
			}
			got[k] = v
		}
	}
	if !maps.Equal(got, want) {
		t.Fatalf("the three subtasks hold %d entries, want %d", len(got), len(want))
	}
}

func TestLSMSavepointRestoresIntoEitherBackend(t *testing.T) {
	env, files := lsmEnv(t, 1<<20), &memFiles{}
	b := newLSM(t, env, files, 0, 8, 8)
	tb := counts(t, b)
	want := map[int64]int64{}
	for k := range int64(500) {
		tb.Put(b.Shard(kg8(k)), k, 2*k)
		want[k] = 2 * k
	}
	sp := encodeAll(t, b, SnapshotOptions{Savepoint: true})
	if len(sp.Shared) != 0 {
		t.Fatalf("a savepoint refers to shared files %v", sp.Shared)
	}
	m := NewBackend(0, 8, 8)
	if err := m.Restore(sp.Data); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, counts(t, m)); !maps.Equal(got, want) {
		t.Fatalf("the memory backend restored %d entries of the savepoint, want %d", len(got), len(want))
	}
	// And the memory backend's snapshot into an LSM backend.
	r := newLSM(t, env, files, 0, 8, 8)
	if err := r.Restore(snap(t, m)); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, counts(t, r)); !maps.Equal(got, want) {
		t.Fatalf("the LSM backend restored %d entries of the memory backend's snapshot, want %d", len(got), len(want))
	}
}

func TestTheMemoryBackendRefusesAnLSMCheckpoint(t *testing.T) {
	env, files := lsmEnv(t, 1<<20), &memFiles{}
	b := newLSM(t, env, files, 0, 8, 8)
	counts(t, b).Put(0, 8, 1)
	e := encodeAll(t, b, SnapshotOptions{})
	err := NewBackend(0, 8, 8).Restore(e.Data)
	if !errors.Is(err, codec.ErrIncompatible) {
		t.Fatalf("restoring an LSM checkpoint into the memory backend: %v, want an error wrapping codec.ErrIncompatible", err)
	}
}

func TestLSMRestoreRefusesAFileThatFailsItsChecksum(t *testing.T) {
	env, files := lsmEnv(t, 1<<20), &memFiles{}
	b, _ := filledLSM(t, env, files, 100)
	e := encodeAll(t, b, SnapshotOptions{})
	name := e.Shared[0]
	files.files[name][len(files.files[name])/2] ^= 0x40
	r := newLSM(t, lsmEnv(t, 1<<20), files, 0, 8, 8)
	if err := r.Restore(e.Data); err != nil {
		t.Fatal(err)
	}
	err := r.Open()
	if !errors.Is(err, lsm.ErrCorrupt) {
		t.Fatalf("opening with a flipped byte in %s: %v, want an error wrapping lsm.ErrCorrupt", name, err)
	}
}

func TestSettleEvictsAndAdvancesTheEpoch(t *testing.T) {
	env, files := lsmEnv(t, 10), &memFiles{}
	b, tb := filledLSM(t, env, files, 11)
	epoch := b.Epoch()
	if err := b.Settle(); err != nil {
		t.Fatal(err)
	}
	if b.Epoch() == epoch || b.lsm.cached != 0 {
		t.Fatalf("after settling 11 entries over a budget of 10: epoch %d (was %d), %d cached", b.Epoch(), epoch, b.lsm.cached)
	}
	if v, ok := tb.Get(b.Shard(kg8(4)), 4); !ok || v != 4 {
		t.Fatalf("after eviction key 4 reads %d, %v", v, ok)
	}
}

// A passive standby's prefetch makes a later restore on its worker take
// every file locally; a prefetched copy that does not match its manifest
// is downloaded again.
func TestPrefetchedFilesServeARestore(t *testing.T) {
	files := &memFiles{}
	b, _ := filledLSM(t, lsmEnv(t, 1<<20), files, 5000)
	e := encodeAll(t, b, SnapshotOptions{})
	standby := lsmEnv(t, 1<<20)
	st, err := standby.Prefetch(context.Background(), files, "standby/job", e.Shared)
	if err != nil || st.Downloaded != len(e.Shared) {
		t.Fatalf("prefetch: %+v, %v", st, err)
	}
	gets := files.gets
	r := newLSM(t, standby, files, 0, 8, 8)
	if err := r.Restore(e.Data); err != nil {
		t.Fatal(err)
	}
	if err := r.Open(); err != nil {
		t.Fatal(err)
	}
	if st := r.RestoreStats(); st.Local != len(e.Shared) || files.gets != gets {
		t.Fatalf("restore after a prefetch: %+v, %d downloads", st, files.gets-gets)
	}
	if got := len(contents(t, counts(t, r))); got != 5000 {
		t.Fatalf("restored %d entries, want 5000", got)
	}

	// A damaged prefetched copy is not used.
	other := lsmEnv(t, 1<<20)
	if _, err := other.Prefetch(context.Background(), files, "standby/job", e.Shared); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(other.Dir(), "prefetched", e.Shared[0])
	data, err := os.ReadFile(damaged)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := os.WriteFile(damaged, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r2 := newLSM(t, other, files, 0, 8, 8)
	if err := r2.Restore(e.Data); err != nil {
		t.Fatal(err)
	}
	if err := r2.Open(); err != nil {
		t.Fatal(err)
	}
	if st := r2.RestoreStats(); st.Downloaded != 1 || st.Local != len(e.Shared)-1 {
		t.Fatalf("restore with one damaged prefetched file: %+v, want it alone downloaded", st)
	}
}

// filledLSM returns an LSM backend of 8 key groups whose table "counts"
// holds k -> k for the first n keys.
func filledLSM(t testing.TB, env *lsm.Env, files lsm.Files, n int64) (*Backend, *Table[int64, int64]) {
	t.Helper()
	b := newLSM(t, env, files, 0, 8, 8)
	tb := counts(t, b)
	for k := range n {
		tb.Put(b.Shard(kg8(k)), k, k)
	}
	return b, tb
}
