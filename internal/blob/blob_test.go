package blob_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/blob/blobtest"
)

// noStat hides a store's Stat method, to test the blob.Stat fallback.
type noStat struct{ blob.Store }

func TestConformance(t *testing.T) {
	stores := map[string]func(t *testing.T) blob.Store{
		"memory":            func(*testing.T) blob.Store { return blob.Memory() },
		"dir":               func(t *testing.T) blob.Store { return blob.Dir(t.TempDir()) },
		"dir with new root": func(t *testing.T) blob.Store { return blob.Dir(filepath.Join(t.TempDir(), "a", "b")) },
		"faulty memory":     func(*testing.T) blob.Store { return blob.Faulty(blob.Memory(), nil) },
		"faulty dir":        func(t *testing.T) blob.Store { return blob.Faulty(blob.Dir(t.TempDir()), nil) },
		"memory without stat": func(*testing.T) blob.Store {
			return noStat{blob.Memory()}
		},
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) { blobtest.Run(t, newStore) })
	}
}

func TestValidKeyAcceptsTheCheckpointLayout(t *testing.T) {
	for _, key := range []string{"a", "jobs/word-count/chk-000000000017/_metadata", "jobs/j/chk-1/state/3-12", "a.b/c..d"} {
		if err := blob.ValidKey(key); err != nil {
			t.Errorf("ValidKey(%q) = %v, want nil", key, err)
		}
	}
}

func TestValidKeySaysWhatIsWrong(t *testing.T) {
	for key, want := range map[string]string{
		"":       `blob: invalid key "": empty key`,
		"/etc":   `blob: invalid key "/etc": absolute path; keys are relative`,
		"a//b":   `blob: invalid key "a//b": empty path segment`,
		"a/../b": `blob: invalid key "a/../b": ".." segment`,
		"a/.tmp": `blob: invalid key "a/.tmp": segment ".tmp" starts with a dot`,
	} {
		if err := blob.ValidKey(key); err == nil || err.Error() != want {
			t.Errorf("ValidKey(%q) = %v, want %s", key, err, want)
		}
	}
}

func TestDirListSkipsTemporaryFilesLeftByACrash(t *testing.T) {
	root := t.TempDir()
	s := blob.Dir(root)
	if err := s.Put(t.Context(), "a/k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a", ".tmp-123"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".trash", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".trash", "x", "y"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := s.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/k"}; !slices.Equal(got, want) {
		t.Errorf("List = %q, want %q", got, want)
	}
}

func TestDirPutLeavesNoTemporaryFiles(t *testing.T) {
	root := t.TempDir()
	s := blob.Dir(root)
	ctx := t.Context()
	for _, err := range []error{
		s.Put(ctx, "a/k", []byte("1")),
		s.Put(ctx, "a/k", []byte("2")),
		s.PutIfAbsent(ctx, "a/m", []byte("3")),
		s.PutIfAbsent(ctx, "a/m", []byte("4")),
	} {
		if err != nil && !errors.Is(err, blob.ErrExists) {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(filepath.Join(root, "a"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"k", "m"}; !slices.Equal(names, want) {
		t.Errorf("files = %q, want %q", names, want)
	}
}

func TestDirDeleteRemovesEmptiedDirectoriesButNotTheRoot(t *testing.T) {
	root := t.TempDir()
	s := blob.Dir(root)
	ctx := t.Context()
	for _, k := range []string{"jobs/j/chk-1/state/0-0", "jobs/j/chk-1/_metadata", "jobs/j/chk-2/_metadata"} {
		if err := s.Put(ctx, k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"jobs/j/chk-1/state/0-0", "jobs/j/chk-1/_metadata"} {
		if err := s.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "jobs", "j", "chk-1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("chk-1 directory still there after its last blob was deleted (stat: %v)", err)
	}
	if err := s.Delete(ctx, "jobs/j/chk-2/_metadata"); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatalf("root: %v", err)
	}
	if len(entries) != 0 {
		t.Errorf("root holds %d entries after every blob was deleted, want 0", len(entries))
	}
}

func TestDirKeysCannotLeaveTheRoot(t *testing.T) {
	parent := t.TempDir()
	s := blob.Dir(filepath.Join(parent, "root"))
	if err := os.WriteFile(filepath.Join(parent, "secret"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(t.Context(), "../secret"); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("Get(../secret) = %v, want ErrInvalidKey", err)
	}
	got, err := s.List(t.Context(), "../")
	if err != nil || len(got) != 0 {
		t.Errorf("List(../) = %q, %v; want nothing", got, err)
	}
}

func TestFaultyFailsTheNthMatchingCall(t *testing.T) {
	boom := errors.New("boom")
	f := blob.Faulty(blob.Memory(), blob.Plan{
		{Op: blob.OpPut, Prefix: "a/", Nth: 2, Action: blob.Fail(boom)},
	})
	ctx := t.Context()
	var errs []error
	for _, k := range []string{"a/1", "b/1", "a/2", "a/3"} {
		errs = append(errs, f.Put(ctx, k, []byte(k)))
	}
	if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], boom) || errs[3] != nil {
		t.Fatalf("Put errors = %v, want only the second put under a/ to fail", errs)
	}
	if _, err := f.Get(ctx, "a/2"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("a failed Put stored its blob: Get = %v", err)
	}
	if got := f.Injected(); got != 1 {
		t.Errorf("Injected = %d, want 1", got)
	}
}

func TestFaultyTruncatesCorruptsAndTearsWrites(t *testing.T) {
	mem := blob.Memory()
	f := blob.Faulty(mem, blob.Plan{
		{Op: blob.OpPut, Prefix: "trunc", Action: blob.Truncate(3)},
		{Op: blob.OpPutIfAbsent, Prefix: "rot", Action: blob.Corrupt(1)},
		{Op: blob.OpPut, Prefix: "torn", Action: blob.Torn(2)},
	})
	ctx := t.Context()
	if err := f.Put(ctx, "trunc", []byte("abcdef")); err != nil {
		t.Errorf("Truncate reported %v, want success", err)
	}
	if err := f.PutIfAbsent(ctx, "rot", []byte("abc")); err != nil {
		t.Errorf("Corrupt reported %v, want success", err)
	}
	if err := f.Put(ctx, "torn", []byte("abcdef")); !errors.Is(err, blob.ErrInjected) {
		t.Errorf("Torn reported %v, want ErrInjected", err)
	}
	for key, want := range map[string]string{"trunc": "abc", "rot": "a\x9dc", "torn": "ab"} {
		got, err := mem.Get(ctx, key)
		if err != nil || string(got) != want {
			t.Errorf("stored %q = %q, %v; want %q", key, got, err, want)
		}
	}
}

func TestFaultyCorruptsReads(t *testing.T) {
	mem := blob.Memory()
	if err := mem.Put(t.Context(), "k", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	f := blob.Faulty(mem, blob.Plan{{Op: blob.OpGet, Nth: 1, Action: blob.Corrupt(0)}})
	for i, want := range []string{"\x9ebc", "abc"} {
		got, err := f.Get(t.Context(), "k")
		if err != nil || string(got) != want {
			t.Errorf("Get #%d = %q, %v; want %q", i+1, got, err, want)
		}
	}
}

func TestFaultyFailsListDeleteAndStat(t *testing.T) {
	f := blob.Faulty(blob.Memory(), blob.Plan{
		{Op: blob.OpList, Action: blob.Fail(nil)},
		{Op: blob.OpDelete, Action: blob.Fail(nil)},
		{Op: blob.OpStat, Action: blob.Fail(nil)},
	})
	ctx := t.Context()
	if _, err := f.List(ctx, ""); !errors.Is(err, blob.ErrInjected) {
		t.Errorf("List = %v, want ErrInjected", err)
	}
	if err := f.Delete(ctx, "k"); !errors.Is(err, blob.ErrInjected) {
		t.Errorf("Delete = %v, want ErrInjected", err)
	}
	if _, err := blob.Stat(ctx, f, "k"); !errors.Is(err, blob.ErrInjected) {
		t.Errorf("Stat = %v, want ErrInjected", err)
	}
}

// A write that fails (here: a name the file system refuses, as a full
// disk refuses data) leaves no empty directories behind, whether it failed
// creating them, writing its temporary file or publishing it.
func TestAFailedDirWriteLeavesNoEmptyDirectories(t *testing.T) {
	long := strings.Repeat("x", 300) // longer than a file name may be
	for _, key := range []string{"jobs/j/chk-1/state/" + long, "jobs/j/chk-1/" + long + "/state"} {
		root := t.TempDir()
		d := blob.Dir(root)
		for name, put := range map[string]func() error{
			"put":           func() error { return d.Put(t.Context(), key, []byte("data")) },
			"put-if-absent": func() error { return d.PutIfAbsent(t.Context(), key, []byte("data")) },
		} {
			if err := put(); err == nil {
				t.Fatalf("%s %s: no error", name, key)
			}
			entries, err := os.ReadDir(root)
			if err != nil || len(entries) != 0 {
				t.Fatalf("%s %s failed and left %v in the root (%v)", name, key, entries, err)
			}
		}
	}
}
