// Package blobtest is the conformance suite for blob.Store
// implementations, in the manner of testing/fstest.TestFS: every store
// runs the same tests, so code written against the interface can rely on
// the contract whichever store it gets.
package blobtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/weir-stream/weir/internal/blob"
)

// Run tests the store that newStore returns against the blob.Store
// contract. newStore is called once per subtest and must return an empty
// store; it may use t for cleanup. Stores that do not implement
// blob.Stater are tested through the blob.Stat fallback.
func Run(t *testing.T, newStore func(t *testing.T) blob.Store) {
	t.Helper()
	for _, tc := range []struct {
		name string
		f    func(*testing.T, blob.Store)
	}{
		{"get of a missing key is not found", testGetMissing},
		{"put then get returns the data", testPutGet},
		{"put overwrites", testOverwrite},
		{"put if absent creates a missing key", testPutIfAbsentCreates},
		{"put if absent refuses an existing key", testPutIfAbsentRefuses},
		{"list is sorted and filtered by prefix", testList},
		{"delete removes and tolerates missing keys", testDelete},
		{"deleting keys at once is deleting each", testDeleteKeys},
		{"stat reports the size", testStat},
		{"invalid keys are rejected", testInvalidKeys},
		{"the store does not alias callers' slices", testNoAliasing},
		{"a done context fails the call", testCanceled},
		{"concurrent put if absent has one winner", testConcurrentPutIfAbsent},
		{"concurrent put and get see whole blobs", testConcurrentPutGet},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, newStore(t)) })
	}
}

func put(t *testing.T, s blob.Store, key, data string) {
	t.Helper()
	if err := s.Put(t.Context(), key, []byte(data)); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func wantData(t *testing.T, s blob.Store, key, want string) {
	t.Helper()
	got, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	if string(got) != want {
		t.Fatalf("Get(%q) = %q, want %q", key, got, want)
	}
}

func wantNotFound(t *testing.T, s blob.Store, key string) {
	t.Helper()
	if got, err := s.Get(t.Context(), key); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Get(%q) = %q, %v; want an error wrapping ErrNotFound", key, got, err)
	}
}

func wantList(t *testing.T, s blob.Store, prefix string, want ...string) {
	t.Helper()
	got, err := s.List(t.Context(), prefix)
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	if len(got) != 0 || len(want) != 0 {
		if !slices.Equal(got, want) {
			t.Fatalf("List(%q) = %q, want %q", prefix, got, want)
		}
	}
}

func testGetMissing(t *testing.T, s blob.Store) {
	wantNotFound(t, s, "missing")
	wantNotFound(t, s, "a/b/missing")
	put(t, s, "a/b", "x")
	wantNotFound(t, s, "a") // a "directory" is not a blob
	wantNotFound(t, s, "a/c")
}

func testPutGet(t *testing.T, s blob.Store) {
	put(t, s, "k", "value")
	put(t, s, "jobs/j/chk-1/state/0-0", "nested")
	put(t, s, "empty", "")
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<14) // 256 KiB
	if err := s.Put(t.Context(), "big", big); err != nil {
		t.Fatal(err)
	}
	wantData(t, s, "k", "value")
	wantData(t, s, "jobs/j/chk-1/state/0-0", "nested")
	wantData(t, s, "empty", "")
	wantData(t, s, "big", string(big))
}

func testOverwrite(t *testing.T, s blob.Store) {
	put(t, s, "k", "a much longer first value")
	put(t, s, "k", "short")
	wantData(t, s, "k", "short")
	if err := s.PutIfAbsent(t.Context(), "p", []byte("first")); err != nil {
		t.Fatal(err)
	}
	put(t, s, "p", "second") // Put overwrites whatever created the key
	wantData(t, s, "p", "second")
}

func testPutIfAbsentCreates(t *testing.T, s blob.Store) {
	if err := s.PutIfAbsent(t.Context(), "a/b/c", []byte("v")); err != nil {
		t.Fatalf("PutIfAbsent: %v", err)
	}
	wantData(t, s, "a/b/c", "v")
	put(t, s, "d", "x")
	if err := s.Delete(t.Context(), "d"); err != nil {
		t.Fatal(err)
	}
	if err := s.PutIfAbsent(t.Context(), "d", []byte("again")); err != nil {
		t.Fatalf("PutIfAbsent after Delete: %v", err)
	}
	wantData(t, s, "d", "again")
}

func testPutIfAbsentRefuses(t *testing.T, s blob.Store) {
	put(t, s, "k", "old")
	err := s.PutIfAbsent(t.Context(), "k", []byte("new"))
	if !errors.Is(err, blob.ErrExists) {
		t.Fatalf("PutIfAbsent over Put = %v, want an error wrapping ErrExists", err)
	}
	wantData(t, s, "k", "old")
	if err := s.PutIfAbsent(t.Context(), "m", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutIfAbsent(t.Context(), "m", []byte("2")); !errors.Is(err, blob.ErrExists) {
		t.Fatalf("second PutIfAbsent = %v, want an error wrapping ErrExists", err)
	}
	wantData(t, s, "m", "1")
}

func testList(t *testing.T, s blob.Store) {
	wantList(t, s, "")
	keys := []string{"b", "a/z", "a/b/c", "a/bc", "a/b/d", "ab", "c/chk-2/x", "c/chk-10/x"}
	for _, k := range keys {
		put(t, s, k, k)
	}
	all := slices.Sorted(slices.Values(keys))
	wantList(t, s, "", all...)
	wantList(t, s, "a", "a/b/c", "a/b/d", "a/bc", "a/z", "ab")
	wantList(t, s, "a/", "a/b/c", "a/b/d", "a/bc", "a/z")
	wantList(t, s, "a/b", "a/b/c", "a/b/d", "a/bc")
	wantList(t, s, "a/b/", "a/b/c", "a/b/d")
	wantList(t, s, "a/b/c", "a/b/c")
	wantList(t, s, "c/chk-", "c/chk-10/x", "c/chk-2/x") // bytes, not numbers
	wantList(t, s, "nothing")
	wantList(t, s, "nothing/")
	wantList(t, s, "a/b/c/") // a blob is not a directory
	wantList(t, s, "../")    // no valid key has this prefix
	wantList(t, s, "/a")
}

func testDelete(t *testing.T, s blob.Store) {
	put(t, s, "x/1", "1")
	put(t, s, "x/2", "2")
	if err := s.Delete(t.Context(), "x/1"); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, s, "x/1")
	wantData(t, s, "x/2", "2")
	wantList(t, s, "x/", "x/2")
	for _, k := range []string{"x/1", "never", "x/2/deeper", "x"} {
		if err := s.Delete(t.Context(), k); err != nil {
			t.Fatalf("Delete(%q) of a missing key = %v, want nil", k, err)
		}
	}
	wantData(t, s, "x/2", "2")
	if err := s.Delete(t.Context(), "x/2"); err != nil {
		t.Fatal(err)
	}
	wantList(t, s, "")
	put(t, s, "x/3", "3") // the emptied "directory" can be used again
	wantData(t, s, "x/3", "3")
}

func testDeleteKeys(t *testing.T, s blob.Store) {
	put(t, s, "a/1", "1")
	put(t, s, "a/2", "2")
	put(t, s, "b/c/3", "3")
	put(t, s, "b/4", "4")
	if err := blob.DeleteKeys(t.Context(), s, []string{"a/1", "a/2", "b/c/3", "never", "b/4/deeper", "b"}); err != nil {
		t.Fatal(err)
	}
	wantList(t, s, "", "b/4")
	if err := blob.DeleteKeys(t.Context(), s, nil); err != nil {
		t.Fatalf("DeleteKeys of no keys = %v, want nil", err)
	}
	put(t, s, "a/5", "5") // the emptied "directories" can be used again
	put(t, s, "b/c/6", "6")
	wantList(t, s, "", "a/5", "b/4", "b/c/6")
}

func testStat(t *testing.T, s blob.Store) {
	put(t, s, "a/k", "12345")
	put(t, s, "e", "")
	for key, want := range map[string]int64{"a/k": 5, "e": 0} {
		got, err := blob.Stat(t.Context(), s, key)
		if err != nil || got.Size != want {
			t.Errorf("Stat(%q) = %+v, %v; want size %d", key, got, err, want)
		}
	}
	for _, key := range []string{"missing", "a"} {
		if _, err := blob.Stat(t.Context(), s, key); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Stat(%q) = %v, want an error wrapping ErrNotFound", key, err)
		}
	}
}

func testInvalidKeys(t *testing.T, s blob.Store) {
	ctx := t.Context()
	for _, key := range []string{"", "/abs", "a//b", "a/", "..", "../x", "a/../b", "a/./b", ".hidden", `a\b`, "a\x00b"} {
		check := func(op string, err error) {
			t.Helper()
			if !errors.Is(err, blob.ErrInvalidKey) {
				t.Errorf("%s(%q) = %v, want an error wrapping ErrInvalidKey", op, key, err)
			}
		}
		check("Put", s.Put(ctx, key, []byte("x")))
		check("PutIfAbsent", s.PutIfAbsent(ctx, key, []byte("x")))
		_, err := s.Get(ctx, key)
		check("Get", err)
		_, err = blob.Stat(ctx, s, key)
		check("Stat", err)
		check("Delete", s.Delete(ctx, key))
	}
	wantList(t, s, "")
}

func testNoAliasing(t *testing.T, s blob.Store) {
	in := []byte("original")
	if err := s.Put(t.Context(), "k", in); err != nil {
		t.Fatal(err)
	}
	copy(in, "XXXXXXXX")
	out, err := s.Get(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	copy(out, "YYYYYYYY")
	wantData(t, s, "k", "original")
}

func testCanceled(t *testing.T, s blob.Store) {
	put(t, s, "k", "v")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context = %v, want an error wrapping context.Canceled", op, err)
		}
	}
	check("Put", s.Put(ctx, "k", []byte("new")))
	check("PutIfAbsent", s.PutIfAbsent(ctx, "n", []byte("new")))
	_, err := s.Get(ctx, "k")
	check("Get", err)
	_, err = s.List(ctx, "")
	check("List", err)
	wantData(t, s, "k", "v")
	wantNotFound(t, s, "n")
}

func testConcurrentPutIfAbsent(t *testing.T, s blob.Store) {
	const writers = 16
	for round := range 4 {
		key := fmt.Sprintf("fence/round-%d", round)
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners []int
		)
		for w := range writers {
			wg.Go(func() {
				err := s.PutIfAbsent(t.Context(), key, []byte(fmt.Sprintf("writer %d", w)))
				switch {
				case err == nil:
					mu.Lock()
					winners = append(winners, w)
					mu.Unlock()
				case !errors.Is(err, blob.ErrExists):
					t.Errorf("PutIfAbsent by writer %d = %v, want nil or ErrExists", w, err)
				}
			})
		}
		wg.Wait()
		if len(winners) != 1 {
			t.Fatalf("round %d: writers %v won, want exactly one", round, winners)
		}
		wantData(t, s, key, fmt.Sprintf("writer %d", winners[0]))
	}
}

func testConcurrentPutGet(t *testing.T, s blob.Store) {
	// Each value is one byte repeated; lengths differ so that a torn or
	// mixed read shows as a wrong length or a mixed byte.
	value := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, 1000*(i+1)) }
	const writers, puts, readers = 4, 20, 4
	put(t, s, "k", string(value(0)))
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for range puts {
				if err := s.Put(t.Context(), "k", value(w)); err != nil {
					t.Errorf("Put: %v", err)
					return
				}
			}
		})
	}
	for range readers {
		wg.Go(func() {
			for range puts {
				got, err := s.Get(t.Context(), "k")
				if err != nil {
					t.Errorf("Get: %v", err)
					return
				}
				i := -1
				if len(got) > 0 {
					i = int(got[0]) - 'a'
				}
				if i < 0 || i >= writers || !bytes.Equal(got, value(i)) {
					t.Errorf("Get returned a blob no Put wrote (%d bytes starting %q)", len(got), got[:min(len(got), 1)])
					return
				}
			}
		})
	}
	wg.Wait()
}
