package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/store"
)

// A job under the pebble backend, killed with SIGKILL, restores in
// another process from the files in the store. A shared file of the
// newest checkpoint with a flipped byte fails its checksum on download:
// the restore says so, marks the checkpoint unusable and restores the one
// before, and the output is exactly-once.
func TestPebbleRestoreFallsBackFromAFlippedByteInASharedFile(t *testing.T) {
	dir := t.TempDir()
	job := []string{"run", "keycount", "--events", "300000", "--keys", "5000", "--window", "100ms", "-p", "2", "--progress", "off"}
	ref := filepath.Join(dir, "ref")
	if code, _, stderr := weir(t, append(job, "--output", ref)...); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, stderr)
	}
	out, state := filepath.Join(dir, "out"), filepath.Join(dir, "state")
	ft := []string{"--guarantee", "exactly-once", "--checkpoint-interval", "50ms", "--state-dir", state, "--output", out,
		"--state-backend", "pebble", "--state-local-dir", filepath.Join(dir, "local")}
	killAfter(t, "checkpoint 4 completed", append(append(job, ft...), "--rate", "150000", "--log-checkpoints")...)

	ctx := context.Background()
	blobs, err := blob.Open(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(blobs)
	ids, err := st.Committed(ctx, "keycount")
	if err != nil || len(ids) < 2 {
		t.Fatalf("want at least 2 retained checkpoints, got %v (%v)", ids, err)
	}
	newest, prev := ids[len(ids)-1], ids[len(ids)-2]
	shared := func(id uint64) map[string]bool {
		m, err := st.Load(ctx, "keycount", id)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, h := range m.Handles() {
			for _, n := range h.Shared {
				out[n] = true
			}
		}
		return out
	}
	older := shared(prev)
	var flip string
	for n := range shared(newest) {
		if !older[n] {
			flip = n
			break
		}
	}
	if flip == "" {
		t.Fatalf("checkpoint %d names no shared file that checkpoint %d does not", newest, prev)
	}
	path := filepath.Join(state, "jobs", "keycount", "shared", flip)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x40
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}

	// Another local directory: the killed process's local copies are
	// intact, and a restore that found them would not read the store.
	ft[len(ft)-1] = filepath.Join(dir, "local2")
	code, _, stderr := weir(t, append(append(job, ft...), "--restore", "latest")...)
	id := strconv.FormatUint(newest, 10)
	if code != 0 || !strings.Contains(stderr, "checkpoint "+id+" is unusable") || !strings.Contains(stderr, "checksum mismatch") ||
		!strings.Contains(stderr, "instead") {
		t.Fatalf("restore with a flipped byte in shared file %s of checkpoint %s: exit %d, want a fallback that says why\n%s", flip, id, code, stderr)
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, lines(t, ref), lines(t, out)); err != nil {
		t.Fatalf("output after the fallback is not exactly-once: %v\n%s", err, stderr)
	}
}
